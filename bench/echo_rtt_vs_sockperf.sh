#!/usr/bin/env bash
# Benchmark (not a test): echo RTT p50 of fwbench vs `sockperf ping-pong`, one client,
# 64-byte UDP messages, through the forwarding gateway, both ends pinned to the same
# CPU and to different CPUs, measured in one run. Prints the p50 ratio (goal <= 1.15).
# Usage: sudo bench/echo_rtt_vs_sockperf.sh [SECONDS] [ROUNDS]
. "$(dirname "$0")/lib.sh"
T=${1:-5}
ROUNDS=${2:-3}
command -v sockperf >/dev/null || { echo "sockperf missing: apt-get install sockperf" >&2; exit 2; }
testbed_up bench

fwbench_p50() { # client-cpu server-cpu
  "$F" echo --testbed "$NAME" -n 1 -P udp -f 64 -t "$T" --pin-client "$1" --pin-server "$2" --no-store --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["rtt_us"]["p50"])'
}

printf "%-12s %5s %14s %14s %8s\n" placement round "sockperf µs" "fwbench µs" ratio
for place in "same:0:0" "cross:0:1"; do
  IFS=: read -r label c s <<<"$place"
  for r in $(seq 1 "$ROUNDS"); do
    a=$(sockperf_p50 64 "$c" "$s")
    b=$(fwbench_p50 "$c" "$s")
    printf "%-12s %5s %14.1f %14.1f %8.3f\n" "$label-cpu" "$r" "$a" "$b" "$(echo "$b / $a" | bc -l)"
  done
done
