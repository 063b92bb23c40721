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
# As root nothing privileged may be skipped: a test ignored for needing root that did
# not run means CI silently lost coverage. A test ignored for another reason must say
# so in its #[ignore = "..."] text (anything not starting with "needs root").
if [ "$(id -u)" -eq 0 ]; then
  skipped=$(grep -E '^test .* \.\.\. ignored, needs root' "$log" || true)
  if [ -n "$skipped" ]; then
    echo "test.sh: running as root, yet privileged tests were skipped:" >&2
    echo "$skipped" >&2
    rc=1
  fi
elif [ "${FWBENCH_TEST_AS_ROOT:-}" = 1 ]; then
  echo "test.sh: FWBENCH_TEST_AS_ROOT=1 but not root: the privileged tests did not run" >&2
  rc=1
fi
exit "$rc"
