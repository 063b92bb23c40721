#!/usr/bin/env bash
# Benchmark (not a test) of fwbench at scale, each on an ephemeral testbed:
#   1. N echo clients (default 10 000, epoll server, 5 s): status, clients with echoes,
#      transactions/s, RTT p50/p99, and the peak RSS of the controller and each agent
#      (goal: all under 1 GiB together).
#   2. `connections --limit L` (default 120 000): connections reached and what stopped
#      them (the limiter names the limit), peak RSS.
# Peak RSS is VmHWM, sampled every 200 ms by bench/rss_watch.sh.
# Usage: bench/scale.sh [N] [L]   (as root)
. "$(dirname "$0")/lib.sh"
N=${1:-10000}
L=${2:-120000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

watch_run() { # out.json args… : run fwbench, print peak RSS per process
  local out=$1; shift
  local t0=$SECONDS
  "$F" "$@" --no-store --json >"$out" 2>"$out.err" &
  local pid=$!
  sleep 0.2
  bench/rss_watch.sh "$pid" | sort -k5 | sed 's/^/  /'
  wait "$pid" || echo "  fwbench exited $? ($(tail -1 "$out.err"))"
  echo "  wall time $((SECONDS - t0)) s"
}

echo "== echo: $N clients, -T epoll, 5 s"
watch_run "$TMP/echo.json" echo -n "$N" -T epoll -t 5
python3 - "$TMP/echo.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = d.get("result") or {}
per = res.get("per_client", [])
echoed = sum(1 for c in per if c["mp"][3]["frames"] > 0)
r = res.get("rtt_us") or {}
print(f"  status {d['status']}  clients {d['params'].get('clients')}  with echoes {echoed}"
      f"  transactions/s {res.get('transactions_per_s', 0):.0f}"
      f"  rtt p50 {r.get('p50', 0):.0f} µs p99 {r.get('p99', 0):.0f} µs"
      + (f"  error: {d['error']}" if d.get("error") else ""))
PY

echo "== connections --limit $L"
watch_run "$TMP/conn.json" connections --limit "$L"
python3 - "$TMP/conn.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = (d.get("result") or {}).get("hold") or {}
print(f"  status {d['status']}  reached {h.get('reached')} of {h.get('limit')}"
      f"  alive at stop {h.get('alive_at_stop')}  open {h.get('open_ms', 0):.0f} ms"
      f"  limiter: {h.get('limiter')}"
      + (f"  error: {d['error']}" if d.get("error") else ""))
PY
