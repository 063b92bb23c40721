#!/usr/bin/env bash
# Benchmark (not a test): trial time MLRsearch needs vs the RFC 2544 bisection for the
# same goals (NDR 0 % and PDR 0.5 %), the same precision (0.5 %) and the same final
# trial duration (60 s), on simulated policing gateways (crates/fwbench/src/search/mlr.rs,
# test `mlr_vs_bisection`). Prints trials and trial seconds per search and the ratio.
# Simulated time, so it runs in a second and needs no privileges.
# The same comparison on the real namespace testbed: bench/mlrsearch_testbed.sh.
# Usage: bench/mlrsearch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test -q -p fwbench --lib search::mlr::tests::mlr_vs_bisection -- --nocapture 2>&1 |
  grep -E '^(gateway|\()'
