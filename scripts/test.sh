#!/usr/bin/env bash
# Run every test: unit tests, the agent protocol tests, and — as root — the
# privileged integration tests in network namespaces (otherwise reported as ignored).
#
# Skips are counted, never passed: a test that cannot run here calls the shared
# `skip(reason)` (crates/fwbench/tests/util/skip.rs), which appends its name and reason
# to $FWBENCH_SKIP_LOG. The closing line counts those and the ignored tests as skipped
# (passed excludes them) and lists them. In CI (FWBENCH_TEST_AS_ROOT=1) any skip, and
# not being root, fails the run.
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
FWBENCH_SKIP_LOG=$(mktemp)
export FWBENCH_SKIP_LOG
trap 'rm -f "$log" "$FWBENCH_SKIP_LOG"' EXIT
# Arguments select what to test (e.g. `-p store`); by default the whole workspace.
# What follows a `--` goes to the test binaries, as with `cargo test` (e.g. filters).
targets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do targets+=("$1"); shift; done
[ $# -gt 0 ] && { shift; extra+=("$@"); }
[ ${#targets[@]} -gt 0 ] || targets=(--workspace)
# FWBENCH_TEST_CARGO replaces cargo (the test of this script gives a fake runner's
# output to the counting below: crates/fwbench/tests/conventions.rs).
${FWBENCH_TEST_CARGO:-cargo} test "${targets[@]}" --no-fail-fast -- "${extra[@]+"${extra[@]}"}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# The tests that did not run: ignored by the runner, or skipped by the test itself.
ignored=$(grep -E '^test .* \.\.\. ignored' "$log" | sed -E 's/^test (.*) \.\.\. ignored,? ?(.*)$/\1\t\2/' || true)
skipped=$(sort -u "$FWBENCH_SKIP_LOG")
n_skipped=$(printf '%s' "$skipped" | grep -c . || true)
# One closing line for the whole run, summed over every test binary; a skipped test
# reported `ok` by the runner is taken out of the passed count.
awk -v sk="$n_skipped" '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed;?$/) p += $(i-1); if ($i ~ /^failed;?$/) f += $(i-1); if ($i ~ /^ignored;?$/) s += $(i-1) } }
     END { printf "\ntests: %d passed, %d failed, %d skipped\n", p - sk, f, s + sk }' "$log"
if [ -n "$ignored$skipped" ]; then
  echo "skipped:"
  { [ -z "$ignored" ] || printf '%s\n' "$ignored"; [ -z "$skipped" ] || printf '%s\n' "$skipped"; } |
    awk -F'\t' '{ printf "  %s: %s\n", $1, ($2 == "" ? "ignored" : $2) }'
fi
# As root nothing may be skipped in CI: a test that did not run means CI silently lost
# coverage. Outside CI the skips are listed above and counted, and the run may pass.
if [ "${FWBENCH_TEST_AS_ROOT:-}" = 1 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "test.sh: FWBENCH_TEST_AS_ROOT=1 but not root: the privileged tests did not run" >&2
    rc=1
  elif [ -n "$ignored$skipped" ]; then
    echo "test.sh: FWBENCH_TEST_AS_ROOT=1: tests were skipped (listed above); CI must run them all" >&2
    rc=1
  fi
fi
exit "$rc"
