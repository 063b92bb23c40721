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
#  3. `fwbench compare` the two files: per configuration, its main metric (the one the
#     report ranks by) in run B against run A, Welch's test over the repetitions,
#     Holm-corrected over the configurations (family-wise 5 %). A configuration
#     *matches* when the difference is not significant, *differs* when it is, and is
#     *untested* when a side has fewer than two repetitions (or no spread);
#  4. writes the verdict — date, commit, machine, load, what matched and what did not —
#     between `<!-- check:PRESET -->` and `<!-- /check:PRESET -->` right after the
#     tables (the block is added the first time).
# The verdict is "matches" only when every configuration was tested and none differs,
# "matches, noisy" when that holds but the main metric's median CV over the repetitions
# is above the report's 5 % stability limit (a match within wide noise), "differs" or
# "untested" otherwise. Exit 0 when every preset matches, 1 when one is noisy, differs
# or could not be tested, 2 on bad input. FWBENCH names the binary (default target/release/fwbench).
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/seeds.md
bin=${FWBENCH:-target/release/fwbench}
[ -x "$bin" ] || { echo "$0: $bin not found: cargo build --release (or set FWBENCH)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "$0: needs python3" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "$0: needs sqlite3" >&2; exit 2; }

# The verdict of run B (second file) against run A (first) as Markdown on stdout; its
# last line is `verdict: matches|differs|untested`.
verdict() {
    local a=$1 b=$2 json configs
    json=$(mktemp) configs=$(mktemp)
    # compare exits 1 on a regression and 3 on an untested change: both are answers.
    "$bin" compare "$a" "$b" -f json --threshold 0 >"$json" 2>/dev/null || [ -s "$json" ] || {
        echo "$0: fwbench compare $a $b failed" >&2
        rm -f "$json" "$configs"
        return 2
    }
    # Each configuration's main metric, as the report ranks it (run A's report).
    local afile=${a%:[0-9]*} arun=
    [ "$afile" = "$a" ] || arun=${a##*:}
    "$bin" report "$afile" -f json ${arun:+--run "$arun"} -o - >"$configs" 2>/dev/null || {
        echo "$0: fwbench report $afile failed" >&2
        rm -f "$json" "$configs"
        return 2
    }
    python3 - "$json" "$configs" "$a" "$b" <<'EOF'
import json, os, sys
from collections import Counter

doc = json.load(open(sys.argv[1]))
# A configuration is its workload and parameters (without the seed), as compare keys it.
main = {}
for run in json.load(open(sys.argv[2]))["runs"]:
    for c in run["configs"]:
        key = (c["workload"], json.dumps(c["params"], sort_keys=True))
        main[key] = c.get("main_metric")
a_file, b_file = sys.argv[3], sys.argv[4]
pair = doc["pairs"][0]


def key(m):
    wl, params = m["key"].split("|", 1)
    return (wl, json.dumps(json.loads(params), sort_keys=True))


def label(m):
    return json.loads(m["key"].split("|", 1)[1]).get("label") or m["label"]


def fmt(s):
    return f"{s['mean']:.4g}" + (f" ± {s['ci95']:.2g}" if s.get("ci95") else "")


rows = []  # (label, metric, change or None, p or None, why untested)
for m in pair["matched"]:
    metric = main.get(key(m))
    ch = next((c for c in m["changes"] if c["metric"] == metric), None)
    if ch is None:
        rows.append((label(m), metric or "?", None, None, "its main metric was not compared"))
        continue
    w = (ch.get("diff") or {}).get("welch")
    if w is None:
        why = "one repetition a side" if min(ch["old"]["n"], ch["new"]["n"]) < 2 else "no spread"
        rows.append((label(m), ch["metric"], ch, None, why))
    else:
        rows.append((label(m), ch["metric"], ch, w["p"], None))

# Holm over the tested configurations: the k-th smallest p (0-based) is compared with
# alpha / (m - k); once one is not rejected, none after it is.
alpha = doc.get("alpha", 0.05)
tested = sorted((r for r in rows if r[3] is not None), key=lambda r: r[3])
differs = set()
for k, r in enumerate(tested):
    if r[3] < alpha / (len(tested) - k):
        differs.add(id(r))
    else:
        break
# Untested ones with the largest change first (the list is cut after LIST below).
untested = sorted(
    (r for r in rows if r[3] is None),
    key=lambda r: -abs(r[2]["pct"]) if r[2] and r[2].get("pct") is not None else 0,
)
match = [r for r in tested if id(r) not in differs]
diff = [r for r in tested if id(r) in differs]
raw = sum(1 for r in tested if r[3] < alpha)
cvs = lambda side: sorted(
    r[2][side]["sd"] / abs(r[2][side]["mean"])
    for r in rows
    if r[2] and r[2][side].get("sd") is not None and r[2][side]["mean"]
)
med = lambda v: v[len(v) // 2] if v else None
pc = lambda v: f"{100 * v:.1f} %" if v is not None else "-"
# The report calls a configuration unstable above a CV of 5 % (report::UNSTABLE_CV).
noisy = max((x for x in (med(cvs("old")), med(cvs("new"))) if x is not None), default=0) > 0.05
only = len(pair.get("only_old", [])) + len(pair.get("only_new", []))
if not rows:
    v = "untested"
elif diff:
    v = "differs"
elif untested or only:
    v = "untested"
elif noisy:
    v = "matches, noisy"
else:
    v = "matches"
print(
    f"Run B (`{b_file}`) against run A (`{a_file}`, the tables above), per configuration "
    f"its main metric, Welch's t-test over the repetitions, Holm-corrected over the "
    f"{len(tested)} tested configurations (family-wise {alpha * 100:g} %): "
    f"**{len(match)} match, {len(diff)} differ, {len(untested)} untested** "
    f"({raw} below p = {alpha:g} before the correction; median CV of the main metric "
    f"over the repetitions: A {pc(med(cvs('old')))}, B {pc(med(cvs('new')))})."
    + (" The noise is above the report's 5 % stability limit: a match here says only "
       "that the difference is within that noise." if noisy else "")
)
if only:
    print(f"{only} configuration(s) ran in one of the runs only (not compared).")
print()
# Every configuration that differs; the untested ones up to LIST (SEED_CHECK_LIST,
# default 20), largest change first (a preset of one repetition a configuration has
# thousands), the rest counted by reason.
LIST = int(os.environ.get("SEED_CHECK_LIST", "20"))
for head, rs in (("Differ", diff), ("Untested", untested[:LIST])):
    for r in rs:
        if r[2] is None:
            print(f"* {head.lower()}: {r[0]}: {r[4]}")
            continue
        c = r[2]
        p = f"p = {r[3]:.2g}" if r[3] is not None else r[4]
        pct = f"{c['pct']:+.3g} %" if c.get("pct") is not None else f"{c['diff']['delta']:+.4g}"
        print(f"* {head.lower()}: {r[0]}: {r[1]} {fmt(c['old'])} → {fmt(c['new'])} ({pct}; {p})")
if len(untested) > LIST:
    why = Counter(r[4] for r in untested[LIST:])
    print(
        f"* untested: {len(untested) - LIST} more ("
        + ", ".join(f"{n} {w}" for w, n in why.most_common())
        + f"; every one: `fwbench compare {a_file} {b_file}`)"
    )
if match:
    print(
        "* match: "
        + "; ".join(f"{r[0]} ({r[1]} {r[2]['pct']:+.2g} %, p = {r[3]:.2g})"
                    if r[2].get("pct") is not None else f"{r[0]} (p = {r[3]:.2g})"
                    for r in match)
    )
print()
print(f"verdict: {v}")
EOF
    local rc=$?
    rm -f "$json" "$configs"
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
        echo "**Does a fresh run match these tables?** \`scripts/seed-check.sh $p\`, checked $(date -u '+%Y-%m-%d %H:%M UTC'): the preset run twice, run A started $(started "$dir/$p-a.db" "$ra"), run B $(started "$dir/$p-b.db" "$rb"); $version, tree at commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- crates scenarios 2>/dev/null || echo '+changes'); machine $(hostname) ($cpu, $(nproc) CPUs, kernel $(uname -r)); load average (1, 5, 15 min) $loads."
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
