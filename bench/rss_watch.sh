#!/usr/bin/env bash
# Print the peak RSS (VmHWM, kB) of a process and of each fwbench agent below it, once
# the process ends. Usage: bench/rss_watch.sh PID
# Agents are the children of PID (`ip netns exec` execs them), named by their
# namespace; sampled every 200 ms (VmHWM only grows, so the last sample is the peak).
set -u
root=$1
declare -A peak
while kill -0 "$root" 2>/dev/null; do
    for p in $root $(pgrep -P "$root" || true); do
        h=$(awk '/VmHWM/ {print $2}' /proc/$p/status 2>/dev/null) || continue
        [ -n "$h" ] || continue
        if [ "$p" = "$root" ]; then key="$p (controller)"
        else key="$p ($(cat /proc/$p/comm 2>/dev/null) in netns $(ip netns identify "$p" 2>/dev/null))"; fi
        if [ -z "${peak[$key]:-}" ] || [ "$h" -gt "${peak[$key]}" ]; then peak[$key]=$h; fi
    done
    sleep 0.2
done
for k in "${!peak[@]}"; do
    printf 'peak RSS %8d kB  pid %s\n' "${peak[$k]}" "$k"
done
