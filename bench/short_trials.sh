#!/usr/bin/env bash
# Benchmark (not a test): a short flood measures the rate of a long one, through a slow
# gateway (8 000 nft filler rules in a table of this script's; a batch of 64 frames takes
# milliseconds there, so a sender that overran its stop or counted its time only to the
# stop would overstate a short trial's rate by up to 4 096 frames ÷ its duration).
# Moved here from crates/fwbench/tests/packet.rs (issue 24): the slow path's rate is the
# CPU other jobs leave it, so the two trials of a pair differ by the load, not by
# fwbench (ratios 0.40–3.1 at a load average of 10–13; docs/tests.md).
# PAIRS pairs of a SHORT-s and a 3-s flood (64-byte frames, client and server on CPU 0),
# in turns; prints each pair's received pps and the median of short ÷ long (goal:
# within 5 % of 1; exit 1 otherwise). Run on a quiet machine.
# Usage: bench/short_trials.sh [PAIRS] [SHORT]   (as root; default 10 pairs, 0.5 s)
. "$(dirname "$0")/lib.sh"
PAIRS=${1:-10}
SHORT=${2:-0.5}
testbed_up st
python3 -c '
print("table inet fwbst {\n chain c {\n  type filter hook forward priority -10; policy accept;")
for i in range(8000):
    print(f"  ip saddr 203.0.113.{i % 250} udp dport {1 + i // 250} drop")
print(" }\n}")
' |
  ip netns exec "$GW" nft -f -
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
pps() {
  "$F" flood --testbed "$NAME" --no-store --json -t "$1" --frame 64 --pin-client 0 --pin-server 0 |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["result"]["received_pps"])'
}
ratios=()
for ((i = 1; i <= PAIRS; i++)); do
  s=$(pps "$SHORT")
  l=$(pps 3)
  r=$(python3 -c "print($s / $l)")
  ratios+=("$r")
  printf 'pair %2d: %s s %8.0f pps, 3 s %8.0f pps, ratio %.3f\n' "$i" "$SHORT" "$s" "$l" "$r"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
xs = [float(x) for x in sys.argv[1:]]
m = statistics.median(xs)
ok = abs(m - 1) <= 0.05
print(f"median short/long {m:.3f} (min {min(xs):.3f}, max {max(xs):.3f}); goal within 5 % of 1: "
      f"{'ok' if ok else 'MISSED'}")
sys.exit(0 if ok else 1)
PY
