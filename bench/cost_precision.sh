#!/usr/bin/env bash
# Benchmark (not a test) of the cost model's precision: how tightly one short run pins
# down what a rule costs each packet, and how repeatable the packet rate it rests on is.
#   1. the cost experiment for iptables-legacy and nft, sender and gateway on CPU 0, the
#      sink on CPU 1 (see docs/commands.md, "Why the sink has its own CPU"): 64-byte
#      flood, 5 rule counts x R repetitions in random (interleaved) order x S seconds
#      (default 6 x 2 s: 60 s of traffic per engine; many short trials beat few long
#      ones: the trial-to-trial spread — where the rules land in memory — is most of the
#      noise, and only more trials average it); per engine and estimator (1/pps and
#      CPU time per packet) the weighted fit's ns per rule ± 95 % CI half-width and the
#      half-width in % of the slope (goal <= 5 %), and which estimator is the headline
#   2. repeatability: CV of received pps over 5 pinned 64-byte floods (goal <= 2 %)
# Prints the load average before and after: numbers taken while the machine is busy
# (compiles, other benches) are wider than this bench can do.
# Usage: bench/cost_precision.sh [SECONDS [REPETITIONS]] (as root, after
# `bash scripts/setup.sh`); KEEP=DIR keeps the results file (DIR/cost.db).
. "$(dirname "$0")/lib.sh"
T=${1:-2}
R=${2:-6}
[ "$(id -u)" = 0 ] || { echo "cost_precision.sh: run as root (fwbench builds namespaces)" >&2; exit 2; }
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP"
  TMP=$(cd "$KEEP" && pwd)
else
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT INT TERM
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

cat >"$TMP/cost.toml" <<TOML
name = "cost precision: ns per rule, iptables-legacy vs nft"
workload = "flood"
repetitions = $R
order = "random"
seed = 20261122

[testbed]
pin_client = "0"
pin_server = "1"

[params]
topology = "forward"
family = 4
size = "frame:64"
rate = "max"
model = "linear"
position = "last"
rules = [0, 2500, 5000, 7500, 10000]
engine = ["iptables-legacy", "nft"]
duration = "${T}s"
TOML

echo "1. cost per rule: 5 rule counts x $R repetitions x $T s per engine, sender CPU 0, sink CPU 1"
rm -f "$TMP/cost.db"
"$F" run "$TMP/cost.toml" --db "$TMP/cost.db" >"$TMP/run.log" 2>&1 || {
  cat "$TMP/run.log" >&2
  exit 1
}
"$F" report "$TMP/cost.db" --format json -o "$TMP/cost.json" >/dev/null
python3 - "$TMP/cost.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
for run in rep["runs"]:
    for f in run["fits"]:
        print(f"   {f['series']}: headline {f['estimator']}")
        for e in f["estimates"]:
            w = e["fit"]
            b, ci = w["line"]["b"], w["line"]["b_ci95"]
            pct = f"{100 * ci / abs(b):.1f} %" if ci is not None and b else "-"
            ci = f"{ci:.3f}" if ci is not None else "-"
            flag = f"  FLAGGED: {e['problem']}" if e.get("problem") else ""
            print(f"     {e['estimator']:<22} {b:8.3f} ± {ci} ns per rule "
                  f"(half-width {pct}; goal <= 5 %; {w['line']['n']} trials at "
                  f"{w['points']} rule counts; a = {w['line']['a']:.0f} ns){flag}")
PY

echo "2. repeatability: 5 pinned 64-byte floods of $T s, no rules (received pps)"
P=()
for _ in 1 2 3 4 5; do
  P+=("$("$F" flood --frame 64 -t "$T" --no-store --json --pin-client 0 --pin-server 1 |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["received_pps"])')")
done
python3 -c "import statistics as s,sys; x=[float(v) for v in sys.argv[1:]]; print(f'   CV {100*s.stdev(x)/s.mean(x):.2f} % (goal <= 2 %; mean {s.mean(x):.0f} pps)')" "${P[@]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
