#!/usr/bin/env bash
# Benchmark (not a test): packets/s offered per sender core by every generator, in one
# run on one testbed (client → forwarding gateway, no rules → server), 64-byte frames,
# one sender thread pinned to CPU 0, the gateway's packet processing steered to CPU 1
# (RPS), so that the sender, not the gateway, sets the rate:
#   fwbench AF_XDP sender  (crates/traffic/examples/xsk_flood until `--sender xdp` is
#                           wired; copy mode on veth), frames into the gateway/s
#   fwbench AF_PACKET      (`fwbench flood --sender raw --sink gateway`)
#   fwbench UDP            (`fwbench flood`, sendmmsg), sent/s
#   trafgen                (netsniff-ng), frames into the gateway/s
#   iperf3 -u -b 0 -l 18   sent/s
# and the AF_XDP/AF_PACKET ratio (goal ≥ 1.5). With PROFILE=1 it also records a
# `perf` profile of the AF_XDP sender's CPU (perf.xsk.data) to show where copy mode
# spends its time.
# Usage: bench/generators.sh [SECONDS]   (as root; installs iperf3 and netsniff-ng from
# Debian if missing)
. "$(dirname "$0")/lib.sh"
T=${1:-5}
X=./target/release/examples/xsk_flood
[ -x "$X" ] || cargo build --release -q -p traffic --example xsk_flood
need iperf3 iperf3
need trafgen netsniff-ng || true
testbed_up gen
MAC=$(ip -n "$GW" -br link show dev g0 | awk '{print $3}')
SRC=$(ip -n "$CLI" -4 -br addr show dev c0 | awk '{print $3}' | cut -d/ -f1)
steer 2

xdp_pps() {
  local a b out
  a=$(g0_rx)
  if [ "${PROFILE:-0}" = 1 ]; then
    out=$(ip netns exec "$CLI" perf record -q -g -o perf.xsk.data -- taskset -c 0 "$X" c0 "$MAC" "$SRC" 198.19.0.2 "$T")
  else
    out=$(ip netns exec "$CLI" taskset -c 0 "$X" c0 "$MAC" "$SRC" 198.19.0.2 "$T")
  fi
  b=$(g0_rx)
  echo "   AF_XDP sender: $out" >&2
  python3 -c "print(($b - $a) / $T)"
}
udp_pps() {
  "$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 | json 'v["result"]["sent_pps"]'
}

echo "packets/s offered by one sender thread on CPU 0, 64-byte frames, $T s each (load average: $(cut -d' ' -f1 /proc/loadavg))"
xdp=$(xdp_pps)
raw=$(raw_pps)
udp=$(udp_pps)
tg=$(trafgen_pps "$SRC")
ip3=$(iperf_udp sent)
python3 - "$xdp" "$raw" "$udp" "$tg" "$ip3" <<'PY'
import sys
xdp, raw, udp, tg, ip3 = map(float, sys.argv[1:])
for name, v in [("fwbench AF_XDP (copy mode)", xdp), ("fwbench AF_PACKET", raw),
                ("fwbench UDP (sendmmsg)", udp), ("trafgen", tg), ("iperf3", ip3)]:
    print(f"  {name:28s} {v:>12,.0f} pps   {v / raw:5.2f}× AF_PACKET")
print(f"AF_XDP / AF_PACKET = {xdp / raw:.2f} (goal ≥ 1.5)")
PY
