#!/usr/bin/env bash
# Bounded fuzzing of the parsers with cargo-fuzz (libFuzzer, nightly):
#   bash bench/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Targets: frame_decoder (proto codec), iptables_import (firewall importer),
# scenario (scenario parser), worklang (workload language). Default: 60 s each.
# Seeds come from fuzz/corpus/<target>/ (checked in); new inputs libFuzzer finds go to
# a scratch corpus under $FUZZ_WORK (default /tmp/fwbench-fuzz), not into the repo.
# A crash leaves fuzz/artifacts/<target>/crash-* and makes this script exit 1.
# Needs: rustup's nightly toolchain and `cargo install cargo-fuzz`.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(frame_decoder iptables_import scenario worklang)
work=${FUZZ_WORK:-/tmp/fwbench-fuzz}
command -v cargo-fuzz >/dev/null || { echo "fuzz.sh: cargo-fuzz missing (cargo install cargo-fuzz)" >&2; exit 2; }
rc=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  echo "== $t: ${secs} s"
  # -rss_limit_mb: a parser must not need more than 2 GB on any input;
  # -max_len: the seeds are small, 64 KiB leaves room to grow.
  if ! cargo +nightly fuzz run "$t" "$work/$t" "fuzz/corpus/$t" -- \
      -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 -timeout=10 2>&1 |
      tee "$work/$t.log" | grep -E '^(#[0-9]+[[:space:]]+(DONE|INITED)|==[0-9]+==|SUMMARY|Done )'; then
    :
  fi
  if grep -qE 'ERROR: libFuzzer|SUMMARY: .*Sanitizer|panicked' "$work/$t.log"; then
    echo "fuzz.sh: $t FOUND A CRASH: see $work/$t.log and fuzz/artifacts/$t/" >&2
    rc=1
  fi
done
exit "$rc"
