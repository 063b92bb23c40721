#!/usr/bin/env bash
# Benchmark (not a test): time to finish a seed-002 subset with adaptive trials
# (stop at ±2 % 95 % CI of the received rate, 1–60 s) vs fixed 60-s trials, and the
# precision each achieved. Prints the time ratio.
# Usage: bench/adaptive_vs_fixed.sh [FIXED_SECONDS]   (as root)
. "$(dirname "$0")/lib.sh"
FIXED=${1:-60}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common='workload = "flow"
order = "sequential"
seed = 1
[testbed]
pin_client = "0"
pin_gateway = "1"
pin_server = "0"
[params]
engine = ["iptables-legacy", "nft"]
rules = [0, 10000]
size = 128
rate = "15M"'
printf '%s\nduration = "1s"\n' "$common" | sed 's/^seed = 1$/seed = 1\nadaptive = { precision = "2%", max_duration = "60s" }/' >"$dir/adaptive.toml"
printf '%s\nduration = "%ss"\n' "$common" "$FIXED" >"$dir/fixed.toml"
run() { # scenario db → seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$F" run "$1" --db "$2" >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.1f}')"
}
ta=$(run "$dir/adaptive.toml" "$dir/a.db")
tf=$(run "$dir/fixed.toml" "$dir/f.db")
echo "adaptive (±2 %, 1–60 s): $ta s; fixed ${FIXED}-s trials: $tf s; ratio fixed/adaptive $(python3 -c "print(f'{$tf/$ta:.1f}')")"
echo "achieved precision per trial (relative 95 % CI half-width of the 200-ms rate windows):"
sqlite3 "$dir/a.db" "SELECT engine, json_extract(params,'$.rules') AS rules, printf('adaptive %.2f %% after %.1f s (%s)', 100*json_extract(results,'$.precision.achieved'), json_extract(results,'$.precision.duration_s'), CASE json_extract(results,'$.precision.reached') WHEN 1 THEN 'met' ELSE 'not met' END) FROM trials ORDER BY engine, rules"
# Fixed trials: the same statistic from their 5-Hz interface samples of the sink.
sqlite3 "$dir/f.db" "SELECT t.engine, json_extract(t.params,'$.rules') AS rules, group_concat(s.value) FROM trials t JOIN samples s ON s.trial_id = t.id WHERE s.role = 'server' AND s.metric = 'if.s0.rx_pps' GROUP BY t.id ORDER BY t.engine, rules" |
  python3 -c '
import sys, statistics as st
for line in sys.stdin:
    e, r, vals = line.strip().split("|")
    x = [float(v) for v in vals.split(",")][1:]
    m = st.mean(x); hw = 1.96 * st.stdev(x) / len(x) ** 0.5
    print(f"{e}|{r}|fixed {100*hw/m:.2f} % after {len(x)/5:.0f} s")'
