#!/usr/bin/env bash
# Run every test: unit tests, the agent protocol tests, and — as root — the
# privileged integration tests in network namespaces (otherwise reported as ignored).
set -uo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
extra=()
if [ "$(id -u)" -eq 0 ]; then
  extra=(--include-ignored)
else
  echo "test.sh: not root: privileged tests will be reported as ignored (skipped)" >&2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --no-fail-fast -- "${extra[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# One closing line for the whole run, summed over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed;?$/) p += $(i-1); if ($i ~ /^failed;?$/) f += $(i-1); if ($i ~ /^ignored;?$/) s += $(i-1) } }
     END { printf "\ntests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
exit "$rc"
