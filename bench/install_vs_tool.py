#!/usr/bin/env python3
"""Benchmark (not a test): install N rules with each engine through fwbench vs the
engine's own batch tool on the same text, in one run, in a fresh testbed gateway.
Prints fwbench's overhead ratio (goal <= 1.10) and, for contrast, one-command-per-rule
insertion (as seed 000 did) timed for 1 000 rules and extrapolated to N.

Usage: sudo bench/install_vs_tool.py [N] [ROUNDS]"""
import json, os, subprocess, sys, time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FW = os.path.join(ROOT, "target", "release", "fwbench")
NAME = f"bi{os.getpid()}"
NS = f"fwb-{NAME}-gw"


def sh(argv, stdin=None, check=True):
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, check=check)


def batches(engine):
    """The batches fwbench would apply: [(argv, text)] and the removal ones."""
    out = sh([FW, "rules", "render", "--engine", engine, "--rules", str(N), "-P", "udp"]).stdout
    res, argv, buf = [], None, []
    for line in out.splitlines():
        if line.startswith("# ") and line.endswith("<<'EOF'"):
            argv, buf = line[2:-len(" <<'EOF'")].split(), []
        elif line == "EOF" and argv:
            res.append((argv, "\n".join(buf) + "\n"))
            argv = None
        elif argv is not None:
            buf.append(line)
    return res


# Runs inside the namespace, so namespace entry is not part of the tool's time
# (fwbench's install_ms is measured by its agent, already inside the namespace).
TIMER = """
import subprocess, sys, time, json
jobs = json.load(open(sys.argv[1]))
t0 = time.perf_counter()
for argv, text in jobs:
    subprocess.run(argv, input=text, text=True, check=True, capture_output=True)
print((time.perf_counter() - t0) * 1e3)
"""


def tool_ms(engine):
    """Time the engine's own tools applying the same batches (then remove them)."""
    path = f"/tmp/fwb-bench-{os.getpid()}.json"
    with open(path, "w") as f:
        json.dump(batches(engine), f)
    try:
        ms = float(sh(["ip", "netns", "exec", NS, sys.executable, "-c", TIMER, path]).stdout)
    finally:
        os.unlink(path)
    cleanup(engine)
    return ms


def cleanup(engine):
    if engine.startswith("nft"):
        sh(["ip", "netns", "exec", NS, "nft", "delete", "table", "inet", "fwbench"], check=False)
    else:
        be = "legacy" if engine.endswith("legacy") else "nft"
        for t, c, chain in [("filter", "FORWARD", "FWBENCH-FORWARD")]:
            sh(["ip", "netns", "exec", NS, f"iptables-{be}", "-t", t, "-D", c, "-j", chain], check=False)
            sh(["ip", "netns", "exec", NS, f"iptables-{be}", "-t", t, "-F", chain], check=False)
            sh(["ip", "netns", "exec", NS, f"iptables-{be}", "-t", t, "-X", chain], check=False)
        if engine.startswith("ipset"):
            sh(["ip", "netns", "exec", NS, "ipset", "destroy", "fwbench-fill0"], check=False)


def fwbench_ms(engine):
    out = sh([FW, "echo", "--testbed", NAME, "--no-store", "--json", "-t", "0.2", "-n", "1", "-P", "udp",
              "--engine", engine, "--rules", str(N)]).stdout
    return json.loads(out)["gateway"]["firewall"]["install_ms"]


def per_rule_ms(engine, k=1000):
    """One command per rule, k rules, extrapolated to N."""
    if engine.startswith("nft"):
        sh(["ip", "netns", "exec", NS, "nft", "add table inet fwbench; add chain inet fwbench forward { type filter hook forward priority filter; }"])
        cmd = lambda i: ["nft", "add", "rule", "inet", "fwbench", "forward", "ip", "saddr", f"192.0.2.{i % 256}", "udp", "dport", str(1 + i // 256), "drop"]
    else:
        be = "legacy" if "legacy" in engine else "nft"
        sh(["ip", "netns", "exec", NS, f"iptables-{be}", "-N", "FWBENCH-FORWARD"])
        cmd = lambda i: [f"iptables-{be}", "-A", "FWBENCH-FORWARD", "-s", f"192.0.2.{i % 256}", "-p", "udp", "--dport", str(1 + i // 256), "-j", "DROP"]
    t0 = time.perf_counter()
    for i in range(k):
        sh(["ip", "netns", "exec", NS] + cmd(i))
    ms = (time.perf_counter() - t0) * 1e3 * N / k
    if engine.startswith("nft"):
        cleanup("nft")
    else:
        be = "legacy" if "legacy" in engine else "nft"
        sh(["ip", "netns", "exec", NS, f"iptables-{be}", "-F", "FWBENCH-FORWARD"], check=False)
        sh(["ip", "netns", "exec", NS, f"iptables-{be}", "-X", "FWBENCH-FORWARD"], check=False)
    return ms


def main():
    if not os.path.exists(FW):
        sh(["cargo", "build", "--release", "-q"])
    sh([FW, "testbed", "up", "--name", NAME])
    try:
        print(f"{N} rules, {ROUNDS} rounds (median)")
        print(f"{'engine':16} {'tool ms':>10} {'fwbench ms':>11} {'ratio':>7} {'1 cmd/rule (extrapolated)':>28}")
        for engine in ["nft", "nft-set", "iptables-legacy", "iptables-nft", "ipset-legacy", "ipset-nft"]:
            t = sorted(tool_ms(engine) for _ in range(ROUNDS))[ROUNDS // 2]
            f = sorted(fwbench_ms(engine) for _ in range(ROUNDS))[ROUNDS // 2]
            per = per_rule_ms(engine) if engine in ("nft", "iptables-legacy", "iptables-nft") else None
            per_s = f"{per / 1e3:.0f} s" if per else "-"
            print(f"{engine:16} {t:10.1f} {f:11.1f} {f / t:7.3f} {per_s:>28}")
    finally:
        sh([FW, "testbed", "down", "--name", NAME], check=False)


if __name__ == "__main__":
    main()
