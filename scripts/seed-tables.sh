#!/bin/sh
# Paste a study's tables into docs/seeds.md from a results file, never by hand.
#
#   scripts/seed-tables.sh NAME RESULTS.db [RUN]
#
# Replaces what stands between the lines `<!-- tables:NAME -->` and
# `<!-- /tables:NAME -->` of docs/seeds.md with `fwbench report RESULTS.db -f tables`
# (each run's findings and tables, under a line naming the run, its date, the fwbench
# commit and the machine). RUN picks one run of the file (default: every run).
# FWBENCH names the binary (default: target/release/fwbench, else fwbench on PATH).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 NAME RESULTS.db [RUN]" >&2; exit 2; }
name=$1 db=$2 run=${3:-}
doc=docs/seeds.md
bin=${FWBENCH:-target/release/fwbench}
[ -x "$bin" ] || bin=fwbench
[ -f "$doc" ] || { echo "$0: run me from the repository root ($doc not found)" >&2; exit 2; }
[ -f "$db" ] || { echo "$0: $db: no such results file" >&2; exit 2; }
grep -q "^<!-- tables:$name -->\$" "$doc" && grep -q "^<!-- /tables:$name -->\$" "$doc" || {
    echo "$0: $doc has no block <!-- tables:$name --> … <!-- /tables:$name -->" >&2
    exit 2
}
tmp=$(mktemp) out=$(mktemp)
trap 'rm -f "$tmp" "$out"' EXIT
if [ -n "$run" ]; then
    "$bin" report "$db" -f tables --run "$run" -o - >"$tmp"
else
    "$bin" report "$db" -f tables -o - >"$tmp"
fi
awk -v start="<!-- tables:$name -->" -v end="<!-- /tables:$name -->" -v gen="$tmp" '
    $0 == start { print; print ""; while ((getline l < gen) > 0) print l; skip = 1; next }
    $0 == end { skip = 0 }
    !skip { print }
' "$doc" >"$out"
cat "$out" >"$doc"
echo "$doc: tables of $name replaced from $db"
