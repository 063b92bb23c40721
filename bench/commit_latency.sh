#!/usr/bin/env bash
# Benchmark (not a test): commit latency of a one-rule change vs the installed rule
# set's size (0, 1 000, 20 000, 50 000) for every netfilter engine and update method,
# with a 20-kpps background flow crossing the gateway (scenarios/rules-under-load.toml),
# and what the traffic felt: time to effect (the marker flow's first dropped packet),
# the longest forwarding stall and background packets lost around the update; a
# withheld figure prints '-', a flagged trial its doubts' kinds (overloaded, empty_window, …).
# A peer's way of measuring is printed beside it: `iptables-legacy -A`/`nft add rule`
# timed on an idle namespace with the same rule count (no traffic), as bug trackers do.
# Usage: bench/commit_latency.sh [SCENARIO]   (as root; KEEP_DB=FILE keeps the results)
. "$(dirname "$0")/lib.sh"
SCENARIO=${1:-scenarios/rules-under-load.toml}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Exit 1 means some trials failed (measured failures): their rows say why.
"$F" run "$SCENARIO" --db "$dir/r.db" >"$dir/log" 2>&1 || sed -n '/^notes:/,$p' "$dir/log"
[ -n "${KEEP_DB:-}" ] && cp "$dir/r.db" "$KEEP_DB"
echo "with traffic (fwbench, $SCENARIO): one update per trial"
sqlite3 -header -column "$dir/r.db" "
SELECT t.engine, json_extract(t.params, '$.rules') AS installed, u.method, t.status,
       printf('%.2f', u.commit_ms) AS commit_ms, u.calls,
       coalesce(printf('%.2f', u.time_to_effect_ms), '-') AS effect_ms,
       coalesce(printf('%.0f', u.stall_ms), '-') AS stall_ms, u.lost AS bg_lost,
       coalesce(u.lost_beyond_baseline, '-') AS beyond_base,
       printf('%.0f', 100 * u.cpu_busy) AS cpu_pct,
       coalesce(u.error, (SELECT group_concat(json_extract(d.value, '$.kind'), ',')
                          FROM json_each(u.doubts) d), '') AS error_or_doubts
FROM gateway_updates u JOIN trials t ON t.id = u.trial_id
ORDER BY t.engine, u.method, installed"
# The peer's number: one rule appended on an idle namespace, timed by the shell.
echo
echo "without traffic (the usual bug-tracker check): one rule appended, idle namespace"
for n in 0 1000 20000 50000; do
  unshare -n bash -c "
    set -e
    { echo '*filter'; echo ':FWB-PEER - [0:0]'
      for i in \$(seq 1 $n); do echo \"-A FWB-PEER -s 192.0.2.\$((i % 256))/32 -p udp --dport \$((1 + i / 256)) -j DROP\"; done
      echo COMMIT; } | iptables-legacy-restore --noflush
    t0=\$(date +%s%N); iptables-legacy -A FWB-PEER -s 198.51.100.1/32 -p udp --dport 9 -j DROP; t1=\$(date +%s%N)
    { echo 'table ip peer { chain c {'
      for i in \$(seq 1 $n); do echo \"ip saddr 192.0.2.\$((i % 256)) udp dport \$((1 + i / 256)) drop\"; done
      echo '}'; echo '}'; } | nft -f -
    t2=\$(date +%s%N); nft add rule ip peer c ip saddr 198.51.100.1 udp dport 9 drop; t3=\$(date +%s%N)
    printf '%6d rules: iptables-legacy -A %.2f ms, nft add rule %.2f ms\n' $n \
      \$(echo \"(\$t1 - \$t0) / 1000000\" | bc -l) \$(echo \"(\$t3 - \$t2) / 1000000\" | bc -l)"
done
