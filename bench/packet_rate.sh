#!/usr/bin/env bash
# Benchmark (not a test) of the packet-rate workloads against peer tools, measured in
# one run on one testbed (client → forwarding gateway, no rules → server). Prints ratios.
#   1. flood, 64-byte frames (18-byte UDP payload), one sender thread on CPU 0:
#      fwbench UDP mode vs `iperf3 -u -b 0 -l 18` (goal >= 1.3), two ways:
#        a. the generator: packets/s sent, the gateway's processing steered to CPU 1
#        b. end to end: packets/s received, the whole path on the sender's CPU
#      fwbench raw mode vs `trafgen` (packets into the gateway per second; goal >= 0.9)
#   2. flow rate accuracy at 15 Mb/s (128 B), 100 kpps and 400 kpps (sent / target)
#   3. ping RTT p50 vs `sockperf ping-pong`, both pinned the same way (goal <= 1.15)
#   4. repeatability: coefficient of variation of received pps over 5 interleaved
#      floods of each tool, fwbench's CV next to iperf3's and their ratio (goal <= 1)
# Usage: bench/packet_rate.sh [SECONDS] (as root; installs iperf3, sockperf, netsniff-ng
# from Debian if missing)
. "$(dirname "$0")/lib.sh"
T=${1:-5}
need iperf3 iperf3
need sockperf sockperf
need trafgen netsniff-ng
testbed_up pr
ip -n "$CLI" addr replace 198.18.1.1/16 dev c0

flood_udp() {
  "$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 "$@" |
    json 'v["result"]["received_pps"]'
}

echo "1. flood, 64-byte frames, one sender thread, no rules ($T s each)"
steer 2
a=$(iperf_udp sent)
b=$("$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 --pin-gateway 1 | json 'v["result"]["sent_pps"]')
steer 0
printf "   a. generator (sent, gateway on CPU 1): iperf3 %.0f pps, fwbench %.0f pps, ratio %s (goal >= 1.3)\n" "$a" "$b" "$(ratio "$b" "$a")"
a=$(iperf_udp); b=$(flood_udp)
printf "   b. end to end (received, one CPU):     iperf3 %.0f pps, fwbench %.0f pps, ratio %s\n" "$a" "$b" "$(ratio "$b" "$a")"
a=$(trafgen_pps 198.18.1.1); b=$(raw_pps)
printf "   raw frames:  trafgen %.0f pps, fwbench %.0f pps, ratio %s (goal >= 0.9)\n" "$a" "$b" "$(ratio "$b" "$a")"

echo "2. paced flow: achieved / target"
for spec in "15M 128 14648.4375" "100kpps 128 100000" "400kpps 18 400000"; do
  read -r rate size target <<<"$spec"
  got=$("$F" flow --testbed "$NAME" --rate "$rate" --size "$size" -t "$T" --no-store --json |
    json 'v["result"]["sent_pps"], v["result"]["received_pps"]' | tr -d '(),')
  read -r sent recv <<<"$got"
  printf "   %-8s target %9.0f pps  sent %9.0f (%s)  received %9.0f (%s)\n" "$rate" "$target" "$sent" \
    "$(ratio "$sent" "$target")" "$recv" "$(ratio "$recv" "$target")"
done

echo "3. ping RTT p50, 16-byte payload, client CPU 0, server CPU 1"
a=$(sockperf_p50 16 0 1)
b=$("$F" ping --testbed "$NAME" -s 16 -t "$T" --pin-client 0 --pin-server 1 --no-store --json | json 'v["result"]["rtt"]["p50_ns"]/1e3')
printf "   sockperf %.2f µs, fwbench %.2f µs, ratio %s (goal <= 1.15)\n" "$a" "$b" "$(ratio "$b" "$a")"

echo "4. repeatability over 5 floods of $T s (received pps)"
cv() { python3 -c "import statistics as s,sys; x=[float(v) for v in sys.argv[1:]]; print(f'{100*s.stdev(x)/s.mean(x):.2f}')" "$@"; }
mean() { python3 -c "import statistics as s,sys; print(f'{s.mean(float(v) for v in sys.argv[1:]):.0f}')" "$@"; }
F5=(); I5=()
# Interleaved (flood, iperf3, flood, …): a drift of the machine hits both alike.
for _ in 1 2 3 4 5; do F5+=("$(flood_udp)"); I5+=("$(iperf_udp)"); done
fcv=$(cv "${F5[@]}"); icv=$(cv "${I5[@]}")
printf "   fwbench CV %s %% (mean %s pps)   iperf3 CV %s %% (mean %s pps)   ratio %s (goal <= 1: fwbench's CV at most iperf3's)\n" \
  "$fcv" "$(mean "${F5[@]}")" "$icv" "$(mean "${I5[@]}")" "$(ratio "$fcv" "$icv")"
printf "   fwbench runs: %s\n   iperf3 runs:  %s\n" "${F5[*]}" "${I5[*]}"
