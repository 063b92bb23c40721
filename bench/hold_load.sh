#!/usr/bin/env bash
# Hold the machine's 1-minute load average near TARGET (default 8) with busy loops of
# its own, for measuring timing assertions under load (docs/tests.md, issue 24).
# Other jobs load the machine too: every 5 s it counts the runnable tasks that are not
# its loops (procs_running of /proc/stat, averaged over the last 30 s) and runs as many
# loops as the target needs beyond them. It kills only its own loops (by PID), on exit,
# SIGINT or SIGTERM.
# Usage: bench/hold_load.sh [TARGET] [LOG]   (LOG: one line per change, default stderr)
set -uo pipefail
TARGET=${1:-8}
LOG=${2:-/dev/stderr}
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  exit 0
}
trap stop EXIT INT TERM
hist=()
while :; do
  running=$(awk '/^procs_running/ { print $2 }' /proc/stat)
  # This script's own sampler (awk) counts as running, and so does each loop.
  others=$((running - ${#pids[@]} - 1))
  [ "$others" -lt 0 ] && others=0
  hist+=("$others")
  [ ${#hist[@]} -gt 6 ] && hist=("${hist[@]:1}")
  sum=0
  for h in "${hist[@]}"; do sum=$((sum + h)); done
  want=$(( TARGET - (sum + ${#hist[@]} / 2) / ${#hist[@]} ))
  [ "$want" -lt 0 ] && want=0
  while [ ${#pids[@]} -lt "$want" ]; do
    sh -c 'while :; do :; done' &
    pids+=("$!")
  done
  while [ ${#pids[@]} -gt "$want" ]; do
    kill "${pids[-1]}" 2>/dev/null
    unset 'pids[-1]'
  done
  echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) others ~$((sum / ${#hist[@]})) loops ${#pids[@]}" >>"$LOG"
  sleep 5
done
