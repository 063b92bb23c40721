#!/usr/bin/env bash
# Benchmark (not a test): packets/s offered per sender core by every generator, in one
# run on one testbed (client → forwarding gateway, no rules → server), 64-byte frames,
# one sender thread pinned to CPU 0, the gateway's packet processing steered to CPU 1
# (RPS), so that the sender, not the gateway, sets the rate:
#   (fwbench senders: frames they got out per second, `sent_pps`)
#   fwbench AF_XDP         (`fwbench flood --sender xdp --sink gateway`; copy mode on
#                           veth, the mode read back from the socket is printed)
#   fwbench AF_PACKET      (`fwbench flood --sender raw --sink gateway`)
#   fwbench UDP            (`fwbench flood`, sendmmsg), sent/s
#   trafgen                (netsniff-ng), frames into the gateway/s
#   iperf3 -u -b 0 -l 18   sent/s
# and the AF_XDP/AF_PACKET ratio (goal ≥ 1.5); then the local testbed's 0-rule NDR
# (`fwbench ndr`, default placement: the gateway on its own CPU) with its
# `limited_by_sender` (goal: false — the gateway's rate, not the sender's). With
# PROFILE=1 it also records a `perf` profile of the AF_XDP flood (perf.xsk.data) to
# show where copy mode spends its time.
# Usage: bench/generators.sh [SECONDS]   (as root; installs iperf3 and netsniff-ng from
# Debian if missing)
. "$(dirname "$0")/lib.sh"
T=${1:-5}
need iperf3 iperf3
need trafgen netsniff-ng || true
testbed_up gen
MAC=$(ip -n "$GW" -br link show dev g0 | awk '{print $3}')
SRC=$(ip -n "$CLI" -4 -br addr show dev c0 | awk '{print $3}' | cut -d/ -f1)
steer 2

xdp_pps() {
  local cmd=("$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 --pin-gateway 1 --sender xdp --sink gateway)
  [ "${PROFILE:-0}" = 1 ] && cmd=(perf record -q -g -o perf.xsk.data -- "${cmd[@]}")
  "${cmd[@]}" | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; print(r["sent_pps"], r["xdp"]["sender"]["mode"])'
}
# Frames fwbench's AF_PACKET sender got out per second.
raw_sent_pps() {
  "$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 --pin-gateway 1 --sender raw --sink gateway |
    json 'v["result"]["sent_pps"]'
}
udp_pps() {
  "$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 --pin-gateway 1 | json 'v["result"]["sent_pps"]'
}

echo "packets/s offered by one sender thread on CPU 0, 64-byte frames, $T s each (load average: $(cut -d' ' -f1 /proc/loadavg))"
read -r xdp mode < <(xdp_pps)
raw=$(raw_sent_pps)
udp=$(udp_pps)
# trafgen stalls after ~1 000 frames when the gateway's receive processing is steered
# to the other CPU (RPS; its TX ring's frames seem not to complete — not investigated):
# it runs with the processing unsteered, on its own CPU, so its figure carries the
# gateway's forwarding cost too (a floor for trafgen, not its ceiling).
steer 0
tg=$(trafgen_pps "$SRC")
steer 2
ip3=$(iperf_udp sent)
python3 - "$mode" "$xdp" "$raw" "$udp" "$tg" "$ip3" <<'PY'
import sys
mode = sys.argv[1]
xdp, raw, udp, tg, ip3 = map(float, sys.argv[2:])
for name, v in [(f"fwbench AF_XDP ({mode} mode)", xdp), ("fwbench AF_PACKET", raw),
                ("fwbench UDP (sendmmsg)", udp), ("trafgen", tg), ("iperf3", ip3)]:
    print(f"  {name:28s} {v:>12,.0f} pps   {v / raw:5.2f}× AF_PACKET")
print(f"AF_XDP / AF_PACKET = {xdp / raw:.2f} (goal ≥ 1.5)")
PY

# The local testbed's 0-rule NDR with the default placement (no --pin-* flag: the
# gateway's processing on its own CPU), on a fresh ephemeral testbed.
echo "0-rule NDR of the local testbed (fwbench ndr -t 2 --precision 1%, default placement):"
"$F" ndr -t 2 --precision 1% --latency-at none --no-store --json |
  python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; print("  NDR {:,.0f} pps, limited_by_sender {}, converged {}".format(r["rate_pps"], str(r["limited_by_sender"]).lower(), str(r["converged"]).lower()))'
