#!/usr/bin/env bash
# Does a fresh run of a study's preset match docs/seeds.md? Run it twice, regenerate
# the study's tables from the first run, and say — beside the tables — whether the
# second run matches the first within the noise the runs themselves show.
#
#   scripts/seed-check.sh [-d DIR] PRESET…          e.g. scripts/seed-check.sh seed001
#   scripts/seed-check.sh --verdict A.db[:RUN] B.db[:RUN]   only the verdict of two runs
#
# For each PRESET (scenarios/PRESET.toml; docs/seeds.md must have its block
# `<!-- tables:PRESET -->`):
#  1. `fwbench run` the preset into DIR/PRESET-a.db, then again into DIR/PRESET-b.db
#     (DIR default /tmp/seed-check; a results file that exists is resumed if its run
#     is unfinished, used as it is if complete — delete it for a fresh run);
#  2. `scripts/seed-tables.sh PRESET DIR/PRESET-a.db` replaces the tables;
#  3. compares the two runs on what the tables claim: each number the findings state
#     with its 95 % CI (the report's JSON `claims`: cost per rule per series, A/B
#     differences, section costs, advantage ratios, protocol and family gaps, session
#     and queuing times, goodputs), under a key that names it alike in both runs. A
#     number *matches* when run B's value is within both runs' stated noise
#     (z = |B − A| / √(se_A² + se_B²), se = CI / 1.96, Holm over the numbers,
#     family-wise 5 %), *differs* when not, and is *untested* when a run states no CI.
#     Beside it, for what it says of the machine between the runs (not the verdict):
#     `fwbench compare` per configuration, its main metric, Welch over the repetitions,
#     Holm-corrected, and the median change — absolute rates on a shared VM drift
#     between runs more than within one, while the claims are relative costs;
#     At most SEED_CHECK_LIST (default 20) numbers of a kind are listed (untested ones
#     by how far they moved between the runs, largest first, the rest counted by why),
#     and configuration rows are named by the parameters that vary between them;
#  4. writes the verdict — date, commit, machine, load, what matched and what did not —
#     between `<!-- check:PRESET -->` and `<!-- /check:PRESET -->` right after the
#     tables (the block is added the first time).
# The verdict is "matches" when every number is tested and none differs, "matches where
# tested" when none differs but some are untested or stated in one run only, "differs"
# when one differs, "untested" when none could be tested. Exit 0 when every preset
# matches, 1 otherwise, 2 on bad input. FWBENCH names the binary (default
# target/release/fwbench).
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/seeds.md
bin=${FWBENCH:-target/release/fwbench}
[ -x "$bin" ] || { echo "$0: $bin not found: cargo build --release (or set FWBENCH)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "$0: needs python3" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "$0: needs sqlite3" >&2; exit 2; }

# The verdict of run B (second file) against run A (first) as Markdown on stdout; its
# last line is `verdict: …`.
verdict() {
    local a=$1 b=$2 json ra rb side run file out
    json=$(mktemp) ra=$(mktemp) rb=$(mktemp)
    # compare exits 1 on a regression and 3 on an untested change: both are answers.
    "$bin" compare "$a" "$b" -f json --threshold 0 >"$json" 2>/dev/null || [ -s "$json" ] || {
        echo "$0: fwbench compare $a $b failed" >&2
        rm -f "$json" "$ra" "$rb"
        return 2
    }
    # Each run's report: its claims and each configuration's main metric.
    for side in "$a=$ra" "$b=$rb"; do
        out=${side##*=} side=${side%=*}
        file=${side%:[0-9]*} run=
        [ "$file" = "$side" ] || run=${side##*:}
        "$bin" report "$file" -f json ${run:+--run "$run"} -o - >"$out" 2>/dev/null || {
            echo "$0: fwbench report $file failed" >&2
            rm -f "$json" "$ra" "$rb"
            return 2
        }
    done
    python3 - "$json" "$ra" "$rb" "$a" "$b" <<'EOF'
import json, math, os, sys

doc = json.load(open(sys.argv[1]))
rep_a, rep_b = (json.load(open(f))["runs"][0] for f in sys.argv[2:4])
a_file, b_file = sys.argv[4], sys.argv[5]
alpha = doc.get("alpha", 0.05)
LIST = max(1, int(os.environ.get("SEED_CHECK_LIST", "20")))


def holm(ps):
    """Indices of the p-values Holm rejects at family-wise alpha."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out = set()
    for k, i in enumerate(order):
        if ps[i] >= alpha / (len(ps) - k):
            break
        out.add(i)
    return out


def g(v):
    return "-" if v is None else f"{v:.4g}"


def mci(v, c):
    return g(v) + (f" ± {c:.2g}" if c is not None else "")


# 1. The claims: each number a finding states with its 95 % CI, under a key that
# names it alike in both runs. Matched when the difference is within both runs' stated
# noise: z = |B - A| / sqrt(se_A² + se_B²), se = CI / 1.96, p two-sided (normal).
ha = {h["key"]: h for h in rep_a.get("claims", [])}
hb = {h["key"]: h for h in rep_b.get("claims", [])}
tested, untested = [], []
for k, x in ha.items():
    y = hb.get(k)
    if y is None:
        continue
    # A claim a run doubts (a bound, a cost whose CI holds 0, a rate that is the
    # sender's pace) is no finding of that run: nothing to match.
    doubt = next(((s, h["doubt"]) for s, h in (("A", x), ("B", y)) if h.get("doubt")), None)
    if doubt is not None:
        untested.append((k, x, y, f"run {doubt[0]} doubts it: {doubt[1]}"))
        continue
    if x["value"] is None or y["value"] is None:
        untested.append((k, x, y, "no value"))
        continue
    if x["ci95"] is None or y["ci95"] is None:
        side = "A" if x["ci95"] is None else "B"
        untested.append((k, x, y, f"run {side} states no CI"))
        continue
    se = math.hypot(x["ci95"], y["ci95"]) / 1.96
    if se == 0:
        untested.append((k, x, y, "no spread"))
        continue
    p = math.erfc(abs(y["value"] - x["value"]) / se / math.sqrt(2))
    tested.append((k, x, y, p))
only = sorted(set(ha) ^ set(hb))
rejected = holm([t[3] for t in tested])
differ = [t for i, t in enumerate(tested) if i in rejected]
match = [t for i, t in enumerate(tested) if i not in rejected]
raw = sum(1 for t in tested if t[3] < alpha)
if not tested:
    v = "untested"
elif differ:
    v = "differs"
elif untested or only:
    v = "matches where tested"
else:
    v = "matches"
print(
    f"Run B (`{b_file}`) against run A (`{a_file}`, the tables above), each number the "
    f"findings state with its 95 % CI: it matches when run B's value is within both runs' "
    f"stated noise (z = |B − A| / √(se_A² + se_B²), se = CI / 1.96; Holm over the "
    f"{len(tested)} tested numbers, family-wise {alpha * 100:g} %): "
    f"**{len(match)} match, {len(differ)} differ, {len(untested)} untested** "
    f"({raw} below p = {alpha:g} before the correction)."
)
if only:
    print(f"{len(only)} number(s) stated in one run only: " + "; ".join(only[:LIST])
          + (f"; … {len(only) - LIST} more" if len(only) > LIST else "") + ".")
print()
for k, x, y, p in differ:
    print(f"* differs: {k}: {mci(x['value'], x['ci95'])} → {mci(y['value'], y['ci95'])} "
          f"{x['unit']} (p = {p:.2g}; {x['over']})")


def moved(t):
    """How far an untested number moved between the runs, relative to run A."""
    a, b = t[1]["value"], t[2]["value"]
    if a is None or b is None:
        return 0.0
    return abs(b - a) / abs(a) if a else (math.inf if b else 0.0)


# The largest moves first: what a reader of an untested number most needs to see.
untested.sort(key=moved, reverse=True)
for k, x, y, why in untested[:LIST]:
    print(f"* untested: {k}: {mci(x['value'], x['ci95'])} → {mci(y['value'], y['ci95'])} "
          f"{x['unit']} ({why})")
if len(untested) > LIST:
    rest = untested[LIST:]
    reasons = sorted({t[3] for t in rest})
    most = moved(rest[0])
    most = f"≤ {100 * most:.3g} %" if math.isfinite(most) else "from 0 or less"
    print(f"* untested: {len(rest)} more, each moved {most} ("
          + "; ".join(f"{sum(1 for t in rest if t[3] == r)}: {r}" for r in reasons) + ")")
if match:
    shown = sorted(match, key=lambda t: t[3])[:LIST]
    print("* matches: " + "; ".join(
        f"{k} ({g(x['value'])} → {g(y['value'])} {x['unit']}, p = {p:.2g})"
        for k, x, y, p in shown
    ) + (f"; and {len(match) - LIST} more, each p ≥ {shown[-1][3]:.2g}" if len(match) > LIST else ""))
print()

# 2. The configurations (the tables' rows), for what they say of the machine between
# the runs: per configuration its main metric (the one the report ranks by), Welch's
# test over the repetitions, Holm over the configurations. Absolute rates drift with the
# machine between runs; the verdict rests on the findings' numbers above.
main = {}
for c in rep_a["configs"]:
    main[(c["workload"], json.dumps(c["params"], sort_keys=True))] = c.get("main_metric")
pair = doc["pairs"][0]


def flat(d, pre=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flat(v, f"{pre}{k}."))
        else:
            out[pre + k] = json.dumps(v)
    return out


# A row is named by what varies between the configurations (a case label alone names
# many: seed002's "128 B @ 15 Mb/s" is 90 of them), the case label first.
flats = [flat(json.loads(m["key"].split("|", 1)[1])) for m in pair["matched"]]
varying = sorted({k for f in flats for k in f if len({o.get(k) for o in flats}) > 1},
                 key=lambda k: (k != "label", k))


def name(m, f):
    text = lambda v: json.loads(v) if isinstance(json.loads(v), str) else v
    parts = [f"{k}={text(f[k])}" for k in varying if k in f]
    return ", ".join(parts) or m["label"]


rows = []  # (label, change, p or None)
for m, f in zip(pair["matched"], flats):
    wl, params = m["key"].split("|", 1)
    params = json.loads(params)
    metric = main.get((wl, json.dumps(params, sort_keys=True)))
    ch = next((c for c in m["changes"] if c["metric"] == metric), None)
    if ch is None:
        continue
    w = (ch.get("diff") or {}).get("welch")
    rows.append((name(m, f), ch, w["p"] if w else None))
ctested = [r for r in rows if r[2] is not None]
crej = holm([r[2] for r in ctested])
cdiff = [r for i, r in enumerate(ctested) if i in crej]
changes = sorted(abs(r[1]["pct"]) / 100 for r in rows if r[1].get("pct") is not None)
cvs = lambda side: sorted(
    r[1][side]["sd"] / abs(r[1][side]["mean"])
    for r in rows
    if r[1][side].get("sd") is not None and r[1][side]["mean"]
)
med = lambda v: v[len(v) // 2] if v else None
pc = lambda v: f"{100 * v:.1f} %" if v is not None else "-"
print(
    f"The {len(rows)} configurations (the tables' rows; information, not the verdict: "
    f"absolute rates drift with this shared machine between runs): main metric, Welch's "
    f"test over the repetitions, Holm-corrected: {len(ctested) - len(cdiff)} match, "
    f"{len(cdiff)} differ, {len(rows) - len(ctested)} untested (one repetition a side or "
    f"no spread); median change {pc(med(changes))}, median CV over the repetitions "
    f"A {pc(med(cvs('old')))}, B {pc(med(cvs('new')))}."
)
for label, c, p in sorted(cdiff, key=lambda r: r[2])[:LIST]:
    pct = f"{c['pct']:+.3g} %" if c.get("pct") is not None else "-"
    print(f"* configuration differs: {label}: {c['metric']} "
          f"{mci(c['old']['mean'], c['old'].get('ci95'))} → "
          f"{mci(c['new']['mean'], c['new'].get('ci95'))} ({pct}; p = {p:.2g})")
if len(cdiff) > LIST:
    print(f"* configuration differs: {len(cdiff) - LIST} more (every one: "
          f"`fwbench compare {a_file} {b_file}`)")
print()
print(f"verdict: {v}")
EOF
    local rc=$?
    rm -f "$json" "$ra" "$rb"
    return $rc
}

if [ "${1:-}" = --verdict ]; then
    [ $# -eq 3 ] || { echo "usage: $0 --verdict A.db B.db" >&2; exit 2; }
    for f in "$2" "$3"; do [ -f "${f%:[0-9]*}" ] || { echo "$0: $f: no such results file" >&2; exit 2; }; done
    out=$(verdict "$2" "$3") || exit 2
    printf '%s\n' "$out"
    case $(printf '%s\n' "$out" | tail -1) in "verdict: matches") exit 0 ;; *) exit 1 ;; esac
fi

dir=/tmp/seed-check
if [ "${1:-}" = -d ]; then
    [ $# -ge 2 ] || { echo "usage: $0 [-d DIR] PRESET…" >&2; exit 2; }
    dir=$2
    shift 2
fi
[ $# -ge 1 ] || { echo "usage: $0 [-d DIR] PRESET… | --verdict A.db B.db" >&2; exit 2; }
[ -f "$doc" ] || { echo "$0: $doc not found" >&2; exit 2; }
for p in "$@"; do
    [ -f "scenarios/$p.toml" ] || { echo "$0: scenarios/$p.toml: no such preset" >&2; exit 2; }
    grep -q "^<!-- tables:$p -->\$" "$doc" || {
        echo "$0: $doc has no block <!-- tables:$p --> for $p" >&2
        exit 2
    }
done
mkdir -p "$dir"

load() { cut -d' ' -f1-3 /proc/loadavg; }
started() { sqlite3 "$1" "SELECT started_at FROM runs WHERE id = $2"; }
# The newest run of a results file and its status ("" when there is none).
newest() { [ -f "$1" ] && sqlite3 -separator ' ' "$1" "SELECT id, status FROM runs ORDER BY id DESC LIMIT 1" || true; }
status=0
for p in "$@"; do
    for side in a b; do
        db=$dir/$p-$side.db
        if [ "$(newest "$db" | cut -d' ' -f2)" = complete ]; then
            echo "seed-check: $p run ${side^^}: $db holds a complete run: used as it is" >&2
            continue
        fi
        echo "seed-check: $p run ${side^^} → $db (log $dir/$p-$side.log)" >&2
        before=$(load)
        # Exit 1 means a trial failed: a result (the report lists it), not a failed run.
        rc=0
        "$bin" run "scenarios/$p.toml" --db "$db" >"$dir/$p-$side.log" 2>&1 || rc=$?
        if [ $rc -gt 1 ] || [ "$(newest "$db" | cut -d' ' -f2)" != complete ]; then
            echo "$0: fwbench run scenarios/$p.toml --db $db: exit $rc, run not complete (see $dir/$p-$side.log)" >&2
            exit 1
        fi
        # The load around the run, kept beside it for a later call that reuses the file.
        echo "$before before, $(load) after" >"$dir/$p-$side.load"
    done
    loads="run A: $(cat "$dir/$p-a.load" 2>/dev/null || echo unknown); run B: $(cat "$dir/$p-b.load" 2>/dev/null || echo unknown)"
    ra=$(newest "$dir/$p-a.db" | cut -d' ' -f1) rb=$(newest "$dir/$p-b.db" | cut -d' ' -f1)
    scripts/seed-tables.sh "$p" "$dir/$p-a.db" "$ra" >&2
    out=$(verdict "$dir/$p-a.db:$ra" "$dir/$p-b.db:$rb") || exit 2
    v=$(printf '%s\n' "$out" | tail -1 | sed 's/^verdict: //')
    [ "$v" = matches ] || status=1
    version=$("$bin" --version)
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
    block=$(mktemp)
    {
        echo "<!-- check:$p -->"
        echo
        echo "**Does a fresh run match these tables?** \`scripts/seed-check.sh $p\`, checked $(date -u '+%Y-%m-%d %H:%M UTC'): the preset run twice, run A started $(started "$dir/$p-a.db" "$ra"), run B $(started "$dir/$p-b.db" "$rb") (each run's own fwbench heads its tables); checked with $version, tree at commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- crates scenarios 2>/dev/null || echo '+changes'); machine $(hostname) ($cpu, $(nproc) CPUs, kernel $(uname -r)); load average (1, 5, 15 min) $loads."
        echo
        echo "Verdict: **$v**. $(printf '%s\n' "$out" | sed '$d')"
        echo
        echo "<!-- /check:$p -->"
    } >"$block"
    python3 - "$doc" "$p" "$block" <<'EOF'
import sys
doc, p, block = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().rstrip("\n")
text = open(doc).read()
start, end = f"<!-- check:{p} -->", f"<!-- /check:{p} -->"
if start in text:
    i, j = text.index(start), text.index(end) + len(end)
    text = text[:i] + block + text[j:]
else:
    anchor = f"<!-- /tables:{p} -->"
    i = text.index(anchor) + len(anchor)
    text = text[:i] + "\n\n" + block + text[i:]
open(doc, "w").write(text)
EOF
    rm -f "$block"
    echo "$doc: $p: verdict $v (beside its tables)" >&2
done
exit $status
