#!/usr/bin/env bash
# Keep a history directory of fwbench results files for `fwbench trend` (docs/ci.md).
#
#   bash scripts/history.sh DB HISTORY [--keep N] [--commit SHA]
#
# Copies the finished results file DB into the directory HISTORY (made if missing) as
#   TIME-COMMIT-KERNEL.db      e.g. 20261128T132810Z-5377bbe1a2b3-6.12.48+deb13-amd64.db
# TIME: the start of DB's newest run (UTC), so names sort oldest first; COMMIT: --commit
# (the CI's commit of the code under test) or else the fwbench commit that made the run;
# KERNEL: the kernel the newest run ran on. The copy is SQLite's online backup
# (`sqlite3 DB .backup`), so a file in WAL mode copies whole; it is written under a
# temporary name and renamed, so HISTORY never holds half a file.
# --keep N: then remove all but the newest N files of that naming in HISTORY (other files
# there are never touched).
#
# Bad input (exit 2, HISTORY unchanged): DB missing or not a fwbench results file, a run of
# it still running, no run in it, a name already in HISTORY, HISTORY not a directory,
# N not a positive whole number. Needs sqlite3 (scripts/setup.sh installs it).
set -euo pipefail

say() { echo "history.sh: $*" >&2; }
bad() {
  say "$*"
  exit 2
}

usage="usage: bash scripts/history.sh DB HISTORY [--keep N] [--commit SHA]"
db=""
hist=""
keep=""
commit=""
while [ $# -gt 0 ]; do
  case "$1" in
    --keep)
      [ $# -ge 2 ] || bad "--keep needs a number; $usage"
      keep=$2
      shift 2
      ;;
    --commit)
      [ $# -ge 2 ] || bad "--commit needs a commit; $usage"
      commit=$2
      shift 2
      ;;
    -h | --help)
      echo "$usage"
      exit 0
      ;;
    -*) bad "unknown option $1; $usage" ;;
    *)
      if [ -z "$db" ]; then
        db=$1
      elif [ -z "$hist" ]; then
        hist=$1
      else
        bad "one results file and one history directory; $usage"
      fi
      shift
      ;;
  esac
done
[ -n "$db" ] && [ -n "$hist" ] || bad "$usage"
if [ -n "$keep" ] && ! [[ "$keep" =~ ^[1-9][0-9]*$ ]]; then
  bad "--keep $keep: expected a positive whole number (how many files to keep)"
fi
if [ -n "$commit" ] && ! [[ "$commit" =~ ^[A-Za-z0-9._+-]{1,64}$ ]]; then
  bad "--commit $commit: expected a commit id (letters, digits, . _ + -)"
fi
command -v sqlite3 >/dev/null || bad "sqlite3 not found (apt-get install sqlite3)"
[ -f "$db" ] || bad "$db: no such results file"
case "$hist" in *"'"*) bad "$hist: a history directory's path may not hold a single quote" ;; esac
if [ -e "$hist" ] && ! [ -d "$hist" ]; then
  bad "$hist: not a directory (the history directory)"
fi

# Read-only queries (`-readonly`: the file is never written, not even migrated).
q() { sqlite3 -readonly -batch -noheader "$db" "$1" 2>/dev/null; }
app=$(q "PRAGMA application_id") || bad "$db: not a SQLite file"
[ "$app" = 1180123697 ] || bad "$db: not a fwbench results file (its SQLite application_id is ${app:-none}, fwbench's is 0x46574231)"
running=$(q "SELECT count(*) FROM runs WHERE status = 'running'") || bad "$db: no runs table (not a fwbench results file?)"
[ "$running" = 0 ] || bad "$db: $running run(s) still running: copy it when fwbench has finished"
newest=$(q "SELECT r.started_at || '|' || h.kernel || '|' || h.fwbench_version FROM runs r JOIN hosts h ON h.id = r.host_id ORDER BY r.id DESC LIMIT 1")
[ -n "$newest" ] || bad "$db: holds no run"
IFS='|' read -r started kernel version <<<"$newest"
[[ "$started" =~ ^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z$ ]] ||
  bad "$db: its newest run's start '$started' is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)"
time="${BASH_REMATCH[1]}${BASH_REMATCH[2]}${BASH_REMATCH[3]}T${BASH_REMATCH[4]}${BASH_REMATCH[5]}${BASH_REMATCH[6]}Z"
if [ -z "$commit" ]; then
  # hosts.fwbench_version: `0.1.0 (commit 1a2b3c4d5e6f+dirty, built 2026-11-22)`.
  commit=$(printf '%s' "$version" | sed -n 's/.*(commit \([^,)]*\).*/\1/p')
  commit=${commit:-unknown}
fi
# A name's parts hold no '/' and nothing a shell or a CI's artifact upload trips on.
clean() { printf '%s' "$1" | tr -c 'A-Za-z0-9._+-' '_'; }
name="$time-$(clean "$commit")-$(clean "${kernel:-unknown}").db"

mkdir -p "$hist"
if [ -e "$hist/$name" ]; then
  bad "$hist/$name already exists (this run is in the history already)"
fi
tmp="$hist/.$name.part"
trap 'rm -f "$tmp"' EXIT
sqlite3 -readonly "$db" ".backup '$tmp'" || bad "$db: could not be copied (sqlite3 .backup failed)"
mv "$tmp" "$hist/$name"
trap - EXIT
echo "$hist/$name"

if [ -n "$keep" ]; then
  # Only files of this naming, newest (greatest name) kept.
  mapfile -t ours < <(find "$hist" -maxdepth 1 -type f -name '*.db' -printf '%f\n' |
    grep -E '^[0-9]{8}T[0-9]{6}Z-.+\.db$' | LC_ALL=C sort)
  drop=$((${#ours[@]} - keep))
  for ((i = 0; i < drop; i++)); do
    rm -f -- "$hist/${ours[$i]}"
    say "pruned ${ours[$i]} (keeping the newest $keep)"
  done
fi
