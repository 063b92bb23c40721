#!/usr/bin/env bash
# Benchmark (not a test): MLRsearch (`fwbench mlr`) against RFC 2544 bisection
# (`fwbench ndr`, one search per goal) on the real namespace testbed, as root — the
# measured counterpart of bench/mlrsearch.sh's simulated policer (issue 37).
#
# Two gateways: `policed` (an nft policer in a table of the script's own, as the mlr
# policer test builds it: `udp dport 9000 limit rate over 5000/second burst 2500
# packets counter drop`, upper bound 40 kpps) and `unpoliced` (plain forwarding, upper
# bound what one max-rate flood got out, measured once at the start). Goal sets: 0;
# 0 and 0.5 %; 0, 0.5 and 5 %. Each repetition runs one mlr per goal set and one ndr per
# goal (0, 0.5 %, 5 %), in a shuffled order; bisection's trial time for a goal set is
# the sum of its goals' ndr searches of the same repetition. Same final trial duration
# (FINAL_S) and precision for both; mlr's first phase is 0.5-s trials; no latency steps.
#
# Prints one JSON line per search (case, rep, tool, goals, rates, converged, status,
# doubts, trial time, trials, wall seconds) to OUT, then a table per case and goal set.
# Usage: bench/mlrsearch_testbed.sh [REPS [FINAL_S [PRECISION [OUT]]]]
. "$(dirname "$0")/lib.sh"
REPS=${1:-3} FINAL=${2:-2} PREC=${3:-2%} OUT=${4:-/tmp/mlrsearch_testbed.$$.jsonl}
: >"$OUT"

POLICER=fwbm_policer
on_exit() { ip netns exec "$GW" nft delete table inet "$POLICER" 2>/dev/null || true; }
testbed_up mlrt
police() {
  ip netns exec "$GW" nft -f - <<NFT
table inet $POLICER {
  chain c { type filter hook forward priority -10; policy accept;
    udp dport 9000 limit rate over 5000/second burst 2500 packets counter drop
  }
}
NFT
}

# one CASE REP TOOL GOALS MAXRATE: one search, its JSON line appended to OUT.
one() {
  local case=$1 rep=$2 tool=$3 goals=$4 max=$5 args t0 t1 rc=0
  if [ "$tool" = mlr ]; then
    args=(mlr --goals "$goals" --initial-duration 0.5)
  else
    args=(ndr --loss "$goals")
  fi
  t0=$(date +%s.%N)
  "$F" "${args[@]}" --testbed "$NAME" --json --no-store -t "$FINAL" --precision "$PREC" \
    --max-rate "$max" --latency-at none >/tmp/mlrt.$$.json 2>/dev/null || rc=$?
  t1=$(date +%s.%N)
  python3 - "$case" "$rep" "$tool" "$goals" "$rc" "$t0" "$t1" "$(cut -d' ' -f1 /proc/loadavg)" \
    /tmp/mlrt.$$.json >>"$OUT" <<'PY'
import json, sys
case, rep, tool, goals, rc, t0, t1, load, path = sys.argv[1:]
try:
    v = json.load(open(path))
except ValueError:
    v = {"status": "no-json", "result": {}}
r = v.get("result") or {}
curve = r.get("curve") or []
if tool == "mlr":
    rates = [g.get("rate_pps") for g in r.get("goals", [])]
    ttime = r.get("trial_time_s")
else:
    rates = [r.get("rate_pps")]
    # ndr's steps all last the trial's duration (confirmations included).
    ttime = len(curve) * (r.get("duration_s") or 0)
print(json.dumps({
    "case": case, "rep": int(rep), "tool": tool, "goals": goals, "exit": int(rc),
    "status": v.get("status"), "converged": r.get("converged"),
    "limited_by_sender": r.get("limited_by_sender"),
    "doubts": [d.get("kind") + ": " + d.get("why", "") for d in (v.get("doubts") or [])],
    "rates_pps": rates, "trial_time_s": ttime, "trials": len(curve),
    "wall_s": round(float(t1) - float(t0), 1), "load1": float(load),
}))
PY
}

echo "# $(date -u +%FT%TZ) $("$F" --version) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for case in policed unpoliced; do
  if [ "$case" = policed ]; then
    police
    max=40000pps
  else
    on_exit
    max=$("$F" flood --testbed "$NAME" -t 2 --no-store --json | json 'str(int(v["result"]["sent_pps"])) + "pps"')
  fi
  echo "# $case: upper bound $max"
  for rep in $(seq "$REPS"); do
    for job in $(printf '%s\n' mlr:0 mlr:0,0.5% mlr:0,0.5%,5% ndr:0 ndr:0.5% ndr:5% | shuf); do
      one "$case" "$rep" "${job%%:*}" "${job#*:}" "$max"
    done
  done
done
rm -f /tmp/mlrt.$$.json
echo "# load $(cut -d' ' -f1-3 /proc/loadavg); JSON lines in $OUT"

python3 - "$OUT" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
# A rate is counted only from a search that converged without a doubt (a flagged
# search's rates are its doubts' business); trial time from every search.
clean = lambda r: r["converged"] and not r["doubts"] and r["status"] == "ok" and r["exit"] == 0
def span(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    if len(xs) == 1:
        return f"{xs[0]:.0f} (n 1)"
    return f"{st.mean(xs):.0f} ({min(xs):.0f}–{max(xs):.0f}, n {len(xs)})"
def judged(rs):
    return (f'{sum(1 for r in rs if clean(r))} / {sum(1 for r in rs if r["doubts"])} / '
            f'{sum(1 for r in rs if not r["converged"] and not r["doubts"])}')
print("| gateway | goals | MLRsearch rates pps: mean (min–max, n) | clean / flagged / not converged, unflagged | "
      "MLR trial s | bisection rates pps | clean / flagged / not converged, unflagged | bisection trial s | bisection ÷ MLR |")
print("|---|---|---|---|---|---|---|---|---|")
for case in ("policed", "unpoliced"):
    for goals in ("0", "0,0.5%", "0,0.5%,5%"):
        gs = goals.split(",")
        m = [r for r in rows if r["case"] == case and r["tool"] == "mlr" and r["goals"] == goals]
        if not m:
            continue
        reps = sorted({r["rep"] for r in m})
        b = {rep: [r for r in rows if r["case"] == case and r["tool"] == "ndr"
                   and r["rep"] == rep and r["goals"] in gs] for rep in reps}
        mrates = " / ".join(span([r["rates_pps"][i] for r in m if clean(r)]) for i in range(len(gs)))
        ball = [x for rep in reps for x in b[rep]]
        brates = " / ".join(span([x["rates_pps"][0] for x in ball if x["goals"] == g and clean(x)])
                            for g in gs)
        mt = [r["trial_time_s"] for r in m]
        bt = [sum(x["trial_time_s"] for x in b[rep]) for rep in reps if len(b[rep]) == len(gs)]
        ratio = f"{st.mean(bt) / st.mean(mt):.2f}" if mt and bt else "–"
        print(f"| {case} | {goals} | {mrates} | {judged(m)} | {span(mt)} | {brates} | {judged(ball)} | {span(bt)} | {ratio} |")
for r in rows:
    if not clean(r):
        print(f'# {r["case"]} rep {r["rep"]} {r["tool"]} {r["goals"]}: status {r["status"]}, exit {r["exit"]}, '
              f'converged {r["converged"]}, rates {r["rates_pps"]}: {"; ".join(r["doubts"])}')
PY
