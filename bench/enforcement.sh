#!/usr/bin/env bash
# Benchmark (not a test): what the firewall lets through while it is reloaded
# (issue 39), scenarios/enforcement.toml — the rule set (nft, iptables-legacy,
# iptables-nft: `reload`) or the drop set (nft-set, ipset-legacy, ipset-nft:
# `reload-set`) loaded again, atomically (`batch`) or emptied then loaded
# (`flush-load`) or one rule at a time (`per-rule`, 1 000 rules), and set elements
# expiring together (`expire-elements`: 1 000, 20 000, 100 000 of them), under a flow
# at half the gateway's capacity. Per engine, method, update and size: the updates,
# their median and longest commit, the must-drop packets that passed (only updates
# whose figures hold; the flagged ones counted apart), the widest violation window,
# the median time to effect (an expiry's), the longest stall of the background and
# what it lost.
# The peer's number beside it: loading the same nft rule set with `nft -f` on an idle
# namespace, timed by the shell — the gap a flush-then-load leaves open is about that.
# Usage: bench/enforcement.sh [SIZES]   (as root; SIZES "1000 20000" by default, e.g.
# "1000 20000 100000": at 100 000 rules the iptables trials take minutes each; the
# sizes of the reload cases — the per-rule and expiry cases keep theirs;
# KEEP_DB=FILE keeps the results)
. "$(dirname "$0")/lib.sh"
SIZES=${1:-1000 20000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
rules="[$(echo "$SIZES" | tr -s ' ' ',')]"
sed "s/^rules = \[.*/rules = $rules/" scenarios/enforcement.toml >"$dir/enforcement.toml"
# Exit 1 means some trials were flagged or failed (measured): their rows say why.
"$F" run "$dir/enforcement.toml" --db "$dir/r.db" >"$dir/log" 2>&1 || sed -n '/^notes:/,$p' "$dir/log"
[ -n "${KEEP_DB:-}" ] && cp "$dir/r.db" "$KEEP_DB"
echo "with traffic (fwbench, scenarios/enforcement.toml; reloads at $SIZES rules)"
python3 - "$dir/r.db" <<'EOF'
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""
  SELECT t.engine, u.method, u.kind, u.installed, u.commit_ms, u.violations,
         u.violation_window_ms, u.stall_ms, coalesce(u.lost_beyond_baseline, u.lost),
         u.doubts, u.error, u.time_to_effect_ms
  FROM gateway_updates u JOIN trials t ON t.id = u.trial_id""").fetchall()
by = {}
for r in rows:
    by.setdefault(r[:4], []).append(r)
print(f"{'engine':14} {'method':10} {'update':15} {'installed':>9} {'n':>2} "
      f"{'commit ms p50':>13} {'max':>8} {'must-drop passed':>16} {'window ms':>9} "
      f"{'effect ms':>9} {'stall ms':>8} {'bg lost':>8}  flagged")
for (engine, method, kind, installed), rs in sorted(by.items()):
    ok = [r for r in rs if not r[10]]
    held = [r for r in ok if not r[9] or r[9] == "[]"]
    commits = [r[4] for r in ok]
    # Violations are counted for reloads only.
    passed = sum(r[5] or 0 for r in held) if any(r[5] is not None for r in held) else "-"
    window = max((r[6] or 0 for r in held), default=0)
    stall = max((r[7] or 0 for r in held), default=0)
    lost = sum(r[8] or 0 for r in held)
    flags = sorted({d["kind"] for r in ok if r[9] for d in json.loads(r[9])})
    failed = len(rs) - len(ok)
    note = ",".join(flags) + (f" {failed} failed" if failed else "")
    p50 = f"{statistics.median(commits):.1f}" if commits else "-"
    mx = f"{max(commits):.1f}" if commits else "-"
    effects = [r[11] for r in held if r[11] is not None]
    effect = f"{statistics.median(effects):.1f}" if effects else "-"
    print(f"{engine:14} {method:10} {kind:15} {installed:>9} {len(rs):>2} {p50:>13} {mx:>8} "
          f"{passed if held else '-':>16} {window if held and passed != '-' else '-':>9} "
          f"{effect:>9} {stall if held else '-':>8} {lost if held else '-':>8}  "
          f"{len(ok) - len(held)} {note}".rstrip())
EOF
echo
echo "without traffic (the peer): loading the same number of nft rules with nft -f, idle namespace"
for n in $SIZES; do
  unshare -n bash -c "
    set -e
    { echo 'table ip peer { chain c { type filter hook forward priority 0;'
      for i in \$(seq 1 $n); do echo \"ip saddr 192.0.2.\$((i % 256)) udp dport \$((1 + i / 256)) drop\"; done
      echo '}'; echo '}'; } > /tmp/fwb-peer-\$\$.nft
    t0=\$(date +%s%N); nft -f /tmp/fwb-peer-\$\$.nft; t1=\$(date +%s%N)
    rm -f /tmp/fwb-peer-\$\$.nft
    printf '%6d rules: nft -f %.1f ms\n' $n \$(echo \"(\$t1 - \$t0) / 1000000\" | bc -l)"
done
