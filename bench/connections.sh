#!/usr/bin/env bash
# Benchmark (not a test): hold N concurrent TCP connections (default 250 000) through
# the gateway of an ephemeral testbed, with a stateful ruleset (nft, model conntrack:
# every connection is an entry of the gateway's conntrack table), and print what was
# held, the gateway's conntrack count at the peak, the time to establish them all, how
# they were spread over processes (and the open-file limit that made it so), and the
# peak RSS (VmHWM) of the controller and of the largest agent of each role.
# Usage: bench/connections.sh [N] [extra fwbench flags…]   (as root)
#   FWBENCH=path/to/fwbench to use another binary (default target/release/fwbench,
#   built when missing).
. "$(dirname "$0")/lib.sh"
N=${1:-250000}
shift || true
OUT=$(mktemp)
trap 'rm -f "$OUT" "$OUT.err"' EXIT
echo "== connections --limit $N (engine nft, model conntrack), hard open-file limit here: $(ulimit -Hn)"
t0=$SECONDS
set +e
"$F" connections --limit "$N" --hold 2 --timeout-ms 10000 --engine nft --model conntrack \
    --no-store --json "$@" >"$OUT" 2>"$OUT.err"
rc=$?
set -e
echo "  wall time $((SECONDS - t0)) s, exit $rc"
[ -s "$OUT" ] || { tail -5 "$OUT.err"; exit 1; }
python3 - "$OUT" "$N" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
r = d.get("result") or {}
h = r.get("hold") or {}
x = r.get("scale") or {}
mib = lambda k: f"{x[k] / 1024:.0f} MiB" if x.get(k) is not None else "-"
print(f"  status        {d.get('status')}")
print(f"  held          {h.get('reached')} of {n} ({h.get('alive_at_stop')} still open after the hold)"
      f", limited by: {h.get('limiter')}")
print(f"  conntrack     {x.get('gateway_conntrack')} entries at the peak on the gateway"
      f" (nf_conntrack_max {x.get('conntrack_max')})")
if x.get("conntrack_max_raised"):
    a, b = x["conntrack_max_raised"]
    print(f"                raised nf_conntrack_max from {a} to {b} for the run (restored)")
print(f"  established   in {h.get('open_ms', 0) / 1000:.1f} s"
      f" ({h.get('reached', 0) / max(h.get('open_ms', 1) / 1000, 1e-9):.0f} connections/s)")
before, now = x.get("nofile_before"), x.get("nofile")
lim = (f"raised the open-file limit from {before} to {now}" if before and now and now > before
       else f"open-file limit {now} per process (hard; not raisable here)")
print(f"  processes     {x.get('processes')} client + {x.get('processes')} server"
      f" ({', '.join(str(p) for p in x.get('per_process', []))} connections); {lim}")
print(f"  server        {r.get('server', {}).get('accepted')} accepted")
print(f"  peak RSS      controller {mib('controller_hwm_kib')}, largest client agent"
      f" {mib('client_hwm_kib')}, server agent {mib('server_hwm_kib')}, gateway agent"
      f" {mib('gateway_hwm_kib')}")
ok = h.get("reached") == n and (x.get("controller_hwm_kib") or 1 << 30) < 2 << 20
sys.exit(0 if ok else 1)
PY
