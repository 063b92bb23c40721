#!/usr/bin/env bash
# Render an fwbench HTML report to PNG with headless Chromium (Debian `chromium`), to
# look at it as a reader would: `scripts/report_screenshot.sh report.html [out.png]`.
# The report is a local file with no network references; Chromium loads nothing else.
set -euo pipefail
in=${1:?usage: report_screenshot.sh REPORT.html [OUT.png] [HEIGHT]}
out=${2:-${in%.html}.png}
height=${3:-8000}
command -v chromium >/dev/null || { echo "chromium missing: apt-get install chromium" >&2; exit 2; }
# --no-sandbox: Chromium refuses to run as root otherwise.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1280,"$height" --screenshot="$out" "file://$(realpath "$in")" 2>/dev/null
echo "$out"
