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
set -euo pipefail
cd "$(dirname "$0")/.."
T=${1:-5}
F=./target/release/fwbench
X=./target/release/examples/xsk_flood
[ -x "$F" ] || cargo build --release -q
[ -x "$X" ] || cargo build --release -q -p traffic --example xsk_flood
need() { command -v "$1" >/dev/null || { apt-get install -y -q "$2" >/dev/null; }; }
need iperf3 iperf3
need trafgen netsniff-ng || true
NAME=gen$$
CLI=fwb-$NAME-cli GW=fwb-$NAME-gw SRV=fwb-$NAME-srv
BG=""
cleanup() {
  [ -n "$BG" ] && kill "$BG" 2>/dev/null || true
  "$F" testbed down --name "$NAME" >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM
"$F" testbed up --name "$NAME" >/dev/null
json() { python3 -c "import json,sys; v=json.load(sys.stdin); print($1)"; }
g0_rx() { ip netns exec "$GW" cat /sys/class/net/g0/statistics/rx_packets; }
MAC=$(ip -n "$GW" -br link show dev g0 | awk '{print $3}')
SRC=$(ip -n "$CLI" -4 -br addr show dev c0 | awk '{print $3}' | cut -d/ -f1)
for i in g0 g1; do ip netns exec "$GW" sh -c "echo 2 > /sys/class/net/$i/queues/rx-0/rps_cpus"; done

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
raw_pps() {
  "$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 --sender raw --sink gateway |
    json 'v["result"]["received_pps"]'
}
udp_pps() {
  "$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 | json 'v["result"]["sent_pps"]'
}
trafgen_pps() {
  command -v trafgen >/dev/null || { echo nan; return; }
  local conf a b
  conf=$(mktemp)
  cat >"$conf" <<CONF
{ eth(da=$MAC, type=0x0800), ipv4(saddr=$SRC, daddr=198.19.0.2, ttl=64, df), udp(sp=30000, dp=9000), fill(0x00, 18) }
CONF
  a=$(g0_rx)
  ip netns exec "$CLI" timeout -s INT "$T" taskset -c 0 trafgen --dev c0 --conf "$conf" --cpus 1 -q >/dev/null 2>&1 || true
  b=$(g0_rx)
  rm -f "$conf"
  python3 -c "print(($b - $a) / $T)"
}
iperf_pps() {
  ip netns exec "$SRV" iperf3 -s -1 -B 198.19.0.2 -p 5201 >/dev/null 2>&1 &
  BG=$!
  sleep 0.5
  ip netns exec "$CLI" taskset -c 0 iperf3 -c 198.19.0.2 -p 5201 -u -b 0 -l 18 -t "$T" -J 2>/dev/null |
    json 'v["end"]["sum"]["packets"] / v["end"]["sum"]["seconds"]'
  wait "$BG" 2>/dev/null || true
  BG=""
}

echo "packets/s offered by one sender thread on CPU 0, 64-byte frames, $T s each (load average: $(cut -d' ' -f1 /proc/loadavg))"
xdp=$(xdp_pps)
raw=$(raw_pps)
udp=$(udp_pps)
tg=$(trafgen_pps)
ip3=$(iperf_pps)
python3 - "$xdp" "$raw" "$udp" "$tg" "$ip3" <<'PY'
import sys
xdp, raw, udp, tg, ip3 = map(float, sys.argv[1:])
for name, v in [("fwbench AF_XDP (copy mode)", xdp), ("fwbench AF_PACKET", raw),
                ("fwbench UDP (sendmmsg)", udp), ("trafgen", tg), ("iperf3", ip3)]:
    print(f"  {name:28s} {v:>12,.0f} pps   {v / raw:5.2f}× AF_PACKET")
print(f"AF_XDP / AF_PACKET = {xdp / raw:.2f} (goal ≥ 1.5)")
PY
