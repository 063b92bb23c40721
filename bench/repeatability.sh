#!/usr/bin/env bash
# Benchmark (not a test): what makes consecutive floods differ (issue 24). Runs N rounds;
# each round floods 64-byte frames once per placement, in a random order within the
# round (a drift of the machine hits every placement alike), plus one iperf3 flood:
#   free     the sender on CPU 0, the sink where the scheduler puts it (packet_rate.sh's
#            "end to end" case; the gateway's softirq follows the sender onto CPU 0)
#   sink0    the sink pinned to CPU 0 too (the whole path on one CPU)
#   sink1    the sink pinned to CPU 1 (the cost experiments' placement)
#   default  no --pin-* flag: fwbench's default placement (client and sink on CPU 0,
#            the gateway's processing steered to the last CPU)
#   iperf3   `iperf3 -u -b 0 -l 18`, client on CPU 0, server unpinned (the peer tool)
# Every fwbench trial is stored; for each it prints received pps, where the sink's
# threads ran (share of 5-Hz looks on CPU 0, taken from outside with `ps -L -o psr`),
# the sink's and sender's CPU and the gateway's softirq per CPU (the trial's own 5-Hz
# samples), then the CV of each placement. Usage: bench/repeatability.sh [N [SECONDS]]
# (as root); KEEP=DIR keeps the results file.
N=${1:-8}
T=${2:-4}
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "repeatability.sh: run as root" >&2; exit 2; }
need iperf3 iperf3
TMP=${KEEP:-$(mktemp -d)}
mkdir -p "$TMP"
WATCH=""
on_exit() {
  [ -n "$WATCH" ] && kill "$WATCH" 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
testbed_up rp
DB=$TMP/rep.db
rm -f "$DB"

# Where the server namespace's threads run, 5 times a second, until killed.
watch_sink() {
  while :; do
    for pid in $(ip netns pids "$SRV" 2>/dev/null); do
      ps -L -o psr=,pcpu= -p "$pid" 2>/dev/null || true
    done
    sleep 0.2
  done
}

flood() { # placement
  local pin=()
  case $1 in
    sink0) pin=(--pin-client 0 --pin-server 0) ;;
    sink1) pin=(--pin-client 0 --pin-server 1) ;;
    free) pin=(--pin-client 0) ;;
    default) ;;
  esac
  watch_sink >"$TMP/psr-$1-$r.txt" &
  WATCH=$!
  "$F" flood --testbed "$NAME" --frame 64 -t "$T" --db "$DB" --json "${pin[@]}" \
    >"$TMP/flood-$1-$r.json" 2>>"$TMP/log"
  kill "$WATCH" 2>/dev/null || true
  wait "$WATCH" 2>/dev/null || true
  WATCH=""
}
for r in $(seq 1 "$N"); do
  for p in $(printf '%s\n' free sink0 sink1 default iperf3 | shuf); do
    if [ "$p" = iperf3 ]; then iperf_udp >"$TMP/iperf-$r.txt" || true; else flood "$p"; fi
  done
  printf '\r  round %d of %d' "$r" "$N" >&2
done
echo >&2

python3 - "$TMP" "$N" "$DB" <<'PY'
import json, sqlite3, statistics as st, sys, os
tmp, n, db = sys.argv[1], int(sys.argv[2]), sys.argv[3]
con = sqlite3.connect(db)
def samples(tid, role, metric):
    v = [x for (x,) in con.execute(
        "SELECT value FROM samples WHERE trial_id=? AND role=? AND metric=?", (tid, role, metric))]
    return sum(v) / len(v) if v else float("nan")
ids = [r[0] for r in con.execute("SELECT id FROM trials ORDER BY id")]
rows = {p: [] for p in ("free", "sink0", "sink1", "default")}
i = 0
order = []
for r in range(1, n + 1):
    for p in ("free", "sink0", "sink1", "default"):
        order.append((os.path.getmtime(f"{tmp}/flood-{p}-{r}.json"), p, r))
order.sort()
for (_, p, r), tid in zip(order, ids):
    v = json.load(open(f"{tmp}/flood-{p}-{r}.json"))
    pps = v["result"]["received_pps"]
    looks = [l.split() for l in open(f"{tmp}/psr-{p}-{r}.txt") if l.strip()]
    busy = [l for l in looks if float(l[1]) > 5.0]
    on0 = sum(1 for l in busy if l[0] == "0") / len(busy) if busy else float("nan")
    rows[p].append((r, pps, on0, samples(tid, "server", "proc.cpu"), samples(tid, "client", "proc.cpu"),
                    samples(tid, "gateway", "cpu0.softirq"), samples(tid, "gateway", "cpu1.softirq")))
ip = []
for r in range(1, n + 1):
    try:
        ip.append(float(open(f"{tmp}/iperf-{r}.txt").read()))
    except (OSError, ValueError):
        pass
def cv(x):
    return 100 * st.stdev(x) / st.mean(x) if len(x) > 1 else float("nan")
print(f"{'placement':9} {'round':>5} {'received pps':>12} {'sink on CPU0':>12} {'sink CPU %':>10} {'sender %':>9} {'softirq0 %':>10} {'softirq1 %':>10}")
for p, rs in rows.items():
    for (r, pps, on0, scpu, ccpu, s0, s1) in rs:
        print(f"{p:9} {r:5d} {pps:12.0f} {100*on0:11.0f}% {scpu:10.1f} {ccpu:9.1f} {s0:10.1f} {s1:10.1f}")
print()
for p, rs in rows.items():
    x = [t[1] for t in rs]
    print(f"{p:9} CV {cv(x):5.2f} %  mean {st.mean(x):8.0f} pps  (n={len(x)})")
if ip:
    print(f"{'iperf3':9} CV {cv(ip):5.2f} %  mean {st.mean(ip):8.0f} pps  (n={len(ip)})")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
