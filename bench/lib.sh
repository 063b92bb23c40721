# Sourced by the bench scripts (`. "$(dirname "$0")/lib.sh"`), not run: strict mode, the
# repository as working directory, the fwbench binary, Debian tools, one ephemeral
# testbed removed at exit, and the peer tools' measurements more than one script takes.
# shellcheck shell=bash
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The binary under test: FWBENCH=path/to/fwbench, else the release build (built when
# missing).
F=${FWBENCH:-$PWD/target/release/fwbench}
[ -x "$F" ] || cargo build --release -q -p fwbench

# need COMMAND PACKAGE: install PACKAGE from Debian when COMMAND is missing.
need() { command -v "$1" >/dev/null || { apt-get install -y -q "$2" >/dev/null; }; }

# json EXPR: EXPR (Python, the document as `v`) of the JSON on stdin.
json() { python3 -c "import json,sys; v=json.load(sys.stdin); print($1)"; }
# ratio A B: A / B to three places.
ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }

BG=""
# testbed_up PREFIX [TOPOLOGY]: a testbed NAME=PREFIX<pid> (client CLI → gateway GW →
# server SRV; TOPOLOGY as `testbed up --topology`, default forward), removed at exit
# together with the background process BG and whatever the script's own `on_exit`
# function stops.
testbed_up() {
  NAME=$1$$
  CLI=fwb-$NAME-cli GW=fwb-$NAME-gw SRV=fwb-$NAME-srv
  trap bench_exit EXIT
  trap 'exit 130' INT TERM
  "$F" testbed up --name "$NAME" --topology "${2:-forward}" >/dev/null
}
bench_exit() {
  stop_bg
  if declare -F on_exit >/dev/null; then on_exit; fi
  "$F" testbed down --name "$NAME" >/dev/null 2>&1 || true
}
stop_bg() {
  if [ -n "$BG" ]; then
    kill "$BG" 2>/dev/null || true
    wait "$BG" 2>/dev/null || true
    BG=""
  fi
}

# Frames the gateway's client-side interface received so far.
g0_rx() { ip netns exec "$GW" cat /sys/class/net/g0/statistics/rx_packets; }

# steer MASK: RPS mask for the gateway's interfaces (what --pin-gateway does for fwbench).
steer() {
  for i in g0 g1; do ip netns exec "$GW" sh -c "echo $1 > /sys/class/net/$i/queues/rx-0/rps_cpus"; done
}

# iperf_udp [sent]: packets/s of `iperf3 -u -b 0 -l 18` (18-byte payloads: 64-byte
# frames) for T seconds, client on CPU 0: received (default) or sent.
iperf_udp() {
  local what='v["end"]["sum"]["packets"] * (1 - v["end"]["sum"]["lost_percent"]/100) / v["end"]["sum"]["seconds"]'
  [ "${1:-}" = sent ] && what='v["end"]["sum"]["packets"] / v["end"]["sum"]["seconds"]'
  ip netns exec "$SRV" iperf3 -s -1 -B 198.19.0.2 -p 5201 >/dev/null 2>&1 &
  BG=$!
  sleep 0.5
  ip netns exec "$CLI" taskset -c 0 iperf3 -c 198.19.0.2 -p 5201 -u -b 0 -l 18 -t "$T" -J 2>/dev/null | json "$what"
  wait "$BG" 2>/dev/null || true
  BG=""
}

# trafgen_pps SOURCE: 64-byte frames into the gateway per second from `trafgen` on
# CPU 0 for T seconds (nan without trafgen).
trafgen_pps() {
  command -v trafgen >/dev/null || { echo nan; return; }
  local mac conf a b
  mac=$(ip -n "$GW" -br link show dev g0 | awk '{print $3}')
  conf=$(mktemp)
  # 60 bytes + 4 FCS = a 64-byte frame: Ethernet, IPv4 SOURCE → 198.19.0.2, UDP → 9000, 18 zero bytes.
  cat >"$conf" <<CONF
{ eth(da=$mac, type=0x0800), ipv4(saddr=$1, daddr=198.19.0.2, ttl=64, df), udp(sp=30000, dp=9000), fill(0x00, 18) }
CONF
  a=$(g0_rx)
  ip netns exec "$CLI" timeout -s INT "$T" taskset -c 0 trafgen --dev c0 --conf "$conf" --cpus 1 -q >/dev/null 2>&1 || true
  b=$(g0_rx)
  rm -f "$conf"
  python3 -c "print(($b - $a) / $T)"
}

# raw_pps: 64-byte frames/s of fwbench's AF_PACKET sender into the gateway, T seconds.
raw_pps() {
  "$F" flood --testbed "$NAME" --frame 64 -t "$T" --no-store --json --pin-client 0 --sender raw --sink gateway |
    json 'v["result"]["received_pps"]'
}

# sockperf_p50 SIZE CLIENT_CPU SERVER_CPU: `sockperf ping-pong`'s RTT p50 (µs) with
# SIZE-byte messages for T seconds, the client and the server pinned.
sockperf_p50() {
  ip netns exec "$SRV" taskset -c "$3" sockperf server -i 198.19.0.2 -p 11111 >/dev/null 2>&1 &
  BG=$!
  sleep 0.5
  ip netns exec "$CLI" taskset -c "$2" sockperf ping-pong -i 198.19.0.2 -p 11111 -m "$1" -t "$T" --mps max --full-rtt 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' | awk '/percentile 50.000/ { print $NF }'
  stop_bg
}
