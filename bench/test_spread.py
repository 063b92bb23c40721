#!/usr/bin/env python3
"""Spread of the quantities the privileged tests assert on timing (issue 24).

Each case runs the trial command of one test (same arguments, same debug binary the
tests run, the test's own nft table on the gateway where it has one) and returns the
quantities that test's assertions bound. The cases run interleaved, REPS times, on one
named testbed; each measurement is printed as a JSON line with the 1-minute load
average at its start, and at the end a summary per quantity: n, mean, sd, min, max.
docs/tests.md ("Timing assertions and their tolerances") gives the figures this
measured and the tolerance each test took from them.

Usage (as root, from the worktree): python3 bench/test_spread.py [--reps N]
        [--cases a,b,...] [--out FILE.jsonl] [--bin target/debug/fwbench]
Load: run bench/hold_load.sh 8 beside it to measure at a load average of 8.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

BIN = "target/debug/fwbench"


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def fwbench(args, ok=True):
    p = subprocess.run([BIN] + args, capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise RuntimeError(f"{args}: exit {p.returncode}: {p.stderr[-2000:]}")
    return p


def trial(kind, tb, extra):
    """One trial command, `--no-store --json`, 1 s unless extra has -t (as the tests)."""
    args = [kind, "--testbed", tb, "--no-store", "--json"]
    if "-t" not in extra:
        args += ["-t", "1"]
    p = fwbench(args + extra, ok=False)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"{kind} {extra}: exit {p.returncode}: {p.stderr[-2000:]}")


def nft(ns, text=None, args=()):
    cmd = ["ip", "netns", "exec", ns, "nft"] + (["-f", "-"] if text else list(args))
    return subprocess.run(cmd, input=text, capture_output=True, text=True, check=True)


class Table:
    """A test-owned nft table in the gateway (as packet.rs' GatewayTable)."""

    def __init__(self, tb, name, body):
        self.ns, self.name = f"fwb-{tb}-gw", name
        nft(
            self.ns,
            f"table inet {name} {{\n chain c {{ type filter hook forward priority -10; "
            f"policy accept;\n {body}\n }}\n}}\n",
        )

    def counters(self):
        v = json.loads(nft(self.ns, args=["-j", "list", "table", "inet", self.name]).stdout)
        out = []
        for item in v["nftables"]:
            for e in (item.get("rule") or {}).get("expr", []):
                if "counter" in e:
                    out.append(e["counter"]["packets"])
        return out

    def __enter__(self):
        return self

    def __exit__(self, *a):
        subprocess.run(
            ["ip", "netns", "exec", self.ns, "nft", "delete", "table", "inet", self.name],
            capture_output=True,
        )


def placed(v):
    """Packets the kernel counters place (gateway and sink drops, socket buffer)."""
    r = v["result"]
    n = sum(i["rx_dropped"] for i in (v.get("gateway") or {}).get("interfaces", []))
    n += sum(i["rx_dropped"] for i in r.get("sink_interfaces", []))
    return n + r.get("kernel", {}).get("rcvbuf_errors", 0)


# --- cases: name -> function(testbed) -> {quantity: value} ---------------------------


def numgen(sender, sink):
    def case(tb):
        with Table(tb, "fwbs_numgen", "udp dport 9000 numgen inc mod 7 == 0 counter drop") as t:
            before = t.counters()[0]
            v = trial("flood", tb, ["-t", "1", "-A", "4", "--rate", "50kpps", "--sender",
                                    sender, "--sink", sink, "--flows", "3"])
            r = v["result"]
            dropped = t.counters()[0] - before
            return {"sent": r["sent"], "lost_minus_counter": r["lost"] - dropped}

    return case


def spread(sender):
    def case(tb):
        v = trial("flood", tb, ["-t", "1", "--rate", "20kpps", "--flows", "8", "--sources",
                                "4", "--dsts", "4", "--sender", sender])
        r = v["result"]
        return {"sent": r["sent"], "lost": r["lost"], "placed": placed(v)}

    return case


def imix(tb):
    v = trial("flood", tb, ["-t", "1", "-A", "4", "--rate", "20kpps", "--size", "imix",
                            "--sender", "udp", "--sink", "socket", "--flows", "4",
                            "--threads", "2"])
    r = v["result"]
    return {"sent": r["sent"], "lost": r["lost"]}


SLOW = "".join(f"ip saddr 203.0.113.{i % 250} udp dport {1 + i // 250} drop\n"
               for i in range(8000))


def short_long(short):
    def case(tb):
        return slow_pair(tb, short)

    return case


def slow_pair(tb, short):
    with Table(tb, "fwbs_slow", SLOW):
        out = {}
        for secs in (short, "3"):
            r = trial("flood", tb, ["-t", secs, "--frame", "64", "--pin-client", "0",
                                    "--pin-server", "0"])["result"]
            out[f"received_pps_{secs}"] = r["received_pps"]
            out[f"sent_pps_{secs}"] = r["sent_pps"]
            out[f"over_s_{secs}"] = r["elapsed_s"] - float(secs)
        rs, rl = out[f"received_pps_{short}"], out["received_pps_3"]
        out["rel_diff"] = abs(rs - rl) / rl
        out["ratio"] = rs / rl
        return out


def short_long_shaped(rate_kbit):
    """The same comparison through a token bucket on the client's interface (the
    sender's socket waits for the queue: a slow path whose rate a timer sets)."""

    def case(tb):
        ns = f"fwb-{tb}-cli"
        subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", "c0",
                        "root", "tbf", "rate", f"{rate_kbit}kbit", "burst", "1600",
                        "limit", "4000000"], check=True, capture_output=True)
        try:
            out = {}
            for secs in ("0.5", "3"):
                r = trial("flood", tb, ["-t", secs, "--frame", "64"])["result"]
                out[f"sent_pps_{secs}"] = r["sent_pps"]
                out[f"received_pps_{secs}"] = r["received_pps"]
                out[f"over_s_{secs}"] = r["elapsed_s"] - float(secs)
            rs, rl = out["received_pps_0.5"], out["received_pps_3"]
            out["rel_diff"] = abs(rs - rl) / rl
            return out
        finally:
            subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "c0",
                            "root"], capture_output=True)

    return case


def paced(rate, pps):
    def case(tb):
        v = trial("flow", tb, ["-t", "2", "--rate", rate])
        r = v["result"]
        return {"sent_share": r["sent_pps"] / pps,
                "recv_vs_sent": abs(r["received_pps"] - r["sent_pps"]) / r["sent_pps"],
                "lost": r["lost"], "placed": placed(v)}

    return case


def ping(size):
    def case(tb):
        r = trial("ping", tb, ["-c", "300", "-i", "1ms", "-s", size])["result"]
        return {"lost": r["lost"], "rtt_p99_ms": r["rtt"]["p99_ns"] / 1e6}

    return case


def ndr_policer(limit, burst):
    """ndr against a policer of `limit` packets/s and `burst` packets (1-s trials)."""

    def case(tb):
        body = (f"udp dport 9000 limit rate over {limit}/second burst {burst} packets "
                "counter drop")
        with Table(tb, "fwbs_policer", body):
            v = json.loads(fwbench(["ndr", "--testbed", tb, "--json", "-t", "1",
                                    "--precision", "2%", "--no-store"]).stdout)["result"]
        lat = {round(p["fraction"], 2): p["loss_ratio"] for p in v.get("latency") or []}
        ceiling = limit + burst
        below = [c for c in v["curve"] if c["x"] < ceiling * 0.98 and not c["pass"]]
        behind = [c for c in below if c["sender_behind"]]
        return {"ndr_share": v["rate_pps"] / ceiling,
                "bracket": (v["fail_pps"] - v["rate_pps"]) / v["fail_pps"],
                "loss_at_half": lat.get(0.5), "converged": int(bool(v["converged"])),
                "failed_below_ceiling": len(below), "behind_below_ceiling": len(behind),
                "worst_loss_below": max([c["loss_ratio"] for c in below], default=0.0)}

    return case


def ndr_scenario(limit, burst, max_rate, precision):
    """The ndr test's scenario part: `fwbench run` of an ndr workload, the stored rate."""

    def case(tb):
        import tempfile
        body = (f"udp dport 9000 limit rate over {limit}/second burst {burst} packets "
                "counter drop")
        with tempfile.TemporaryDirectory() as d, Table(tb, "fwbs_policer", body):
            sc = os.path.join(d, "ndr.toml")
            with open(sc, "w") as f:
                f.write(f'workload = "ndr"\n[testbed]\nname = "{tb}"\n[params]\nduration = 1\n'
                        f'precision = "{precision}"\nmax_rate = "{max_rate}"\n')
            db = os.path.join(d, "r.db")
            fwbench(["run", sc, "--db", db])
            out = subprocess.run(["sqlite3", db, "SELECT json_extract(results, '$.search') "
                                  "FROM trials WHERE workload = 'ndr'"],
                                 capture_output=True, text=True, check=True).stdout
        v = json.loads(out)
        ceiling = limit + burst
        below = [c for c in v["curve"] if c["x"] < ceiling * 0.98 and not c["pass"]]
        return {"ndr_share": v["rate_pps"] / ceiling, "failed_below_ceiling": len(below)}

    return case


def mlr(tb):
    limit, burst, d = 5_000.0, 2_500.0, 2.0
    body = "udp dport 9000 limit rate over 5000/second burst 2500 packets counter drop"
    with Table(tb, "fwbs_mlr", body):
        v = json.loads(fwbench(["mlr", "--testbed", tb, "--json", "-t", "2",
                                "--initial-duration", "0.5", "--goals", "0,5%",
                                "--precision", "2%", "--no-store"]).stdout)["result"]
    out = {}
    for g in v["goals"]:
        ratio = g["loss_ratio"]
        floor = limit / (1 - ratio)
        truth = (limit * d + burst) / (d * (1 - ratio))
        out[f"goal{ratio}_floor_share"] = g["rate_pps"] / floor
        out[f"goal{ratio}_truth_share"] = g["rate_pps"] / truth
    out["pdr_over_ndr"] = v["goals"][1]["rate_pps"] / v["goals"][0]["rate_pps"]
    return out


def sinkless(tb):
    r = trial("flood", tb, ["-t", "1", "--engine", "nft", "--model", "raw-drop", "--sink",
                            "gateway"])["result"]
    f = trial("flood", tb, ["-t", "1", "--size", "8000", "--fragment", "--rate", "5kpps"])
    return {"rx_minus_sent": r["received"] - r["sent"], "frag_lost": f["result"]["lost"],
            "frag_received": f["result"]["received"]}


PINNED = ["--pin-client", "0", "--pin-gateway", "1", "--pin-server", "0"]


def pinned(tb):
    v = trial("flow", tb, ["-t", "2", "--rate", "15M", "--engine", "nft", "--rules",
                           "15000"] + PINNED)
    r = v["result"]
    lost = r["lost"]
    return {"sent_pps": r["sent_pps"], "lost_share": lost / r["sent"],
            "unplaced_share": abs(placed(v) - lost) / max(lost, 1)}


def bpf_pps(tb, engine, rules):
    v = trial("flood", tb, ["-t", "2", "--size", "frame:64", "--rate", "max", "--engine",
                            engine, "--rules", str(rules), "--pin-client", "0",
                            "--pin-server", "0"])
    return v["result"]["received"] / (v.get("duration_s") or 2.0)


def bpf_cost(tb):
    pts = [("xdp", 0), ("xdp", 2000), ("xdp", 6000), ("xdp-map", 100), ("xdp-map", 6000)]
    l0, l1, l2, m1, m2 = (bpf_pps(tb, e, n) for e, n in pts)
    return {"l0": l0, "l1": l1, "l2": l2, "m1": m1, "m2": m2, "l0/l1": l0 / l1,
            "l1/l2": l1 / l2, "m2/m1": m2 / m1, "m2/l2": m2 / l2}


def bpf_verdict(tb):
    v = trial("flood", tb, ["--engine", "xdp", "--model", "raw-drop", "--rules", "3",
                            "--rate", "20kpps", "-A", "4"])
    return {"sent": v["result"]["sent"]}


def event(tb):
    v = trial("flow", tb, ["-r", "20kpps", "--flows", "2", "--sources", "2", "-t", "2",
                           "--rules", "100", "--engine", "nft", "--event", "add:1@800ms"])
    e = v["result"]["events"]
    return {"tte_ms": e["updates"][0]["time_to_effect_ms"], "lost": v["result"]["lost"],
            "unbinned_lost": e["unbinned_lost"]}


def live(tb):
    p = fwbench(["flood", "--testbed", tb, "-t", "3", "-i", "1", "--rate", "20kpps",
                 "--no-store", "--json-stream"])
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    iv = [x for x in lines if x["type"] == "interval"]
    end = [x for x in lines if x["type"] != "interval"][0]
    out = {"intervals": len(iv), "after_last": end["after_last_interval"]}
    out["len_min"] = min(i["end_s"] - i["start_s"] for i in iv)
    out["len_max"] = max(i["end_s"] - i["start_s"] for i in iv)
    out["per_s_min"] = min(i["per_s"] for i in iv)
    out["per_s_max"] = max(i["per_s"] for i in iv)
    span = iv[-1]["end_s"] - iv[0]["start_s"]
    out["span_s"] = span
    out["mean_per_s"] = sum(i["count"] for i in iv) / span
    out["per_s_vs_count"] = max(abs(i["per_s"] - i["count"] / (i["end_s"] - i["start_s"]))
                                for i in iv)
    return out


def sessions(tb):
    r = trial("sessions", tb, ["-t", "1", "-p", "2"])["result"]
    return {"sessions": r["sessions"], "elapsed_s": r["elapsed_s"]}


CASES = {
    "numgen_udp": numgen("udp", "socket"),
    "numgen_raw": numgen("raw", "socket"),
    "numgen_xdp": numgen("xdp", "xdp"),
    "spread_udp": spread("udp"),
    "spread_raw": spread("raw"),
    "spread_xdp": spread("xdp"),
    "imix": imix,
    "short_long": short_long("0.5"),
    "short_long_0.25": short_long("0.25"),
    "short_long_tbf": short_long_shaped(1000),
    "paced_15M": paced("15M", 15e6 / 1024),
    "paced_100k": paced("100kpps", 1e5),
    "ping_8": ping("8"),
    "ping_1000": ping("1000"),
    "ndr": ndr_policer(20000, 2000),
    "ndr_5k": ndr_policer(5000, 1000),
    "ndr_scenario": ndr_scenario(20000, 2000, "40kpps", "3%"),
    "ndr_scenario_5k": ndr_scenario(5000, 1000, "12kpps", "3%"),
    "mlr": mlr,
    "sinkless": sinkless,
    "pinned": pinned,
    "bpf_cost": bpf_cost,
    "bpf_verdict": bpf_verdict,
    "event": event,
    "live": live,
    "sessions": sessions,
}


def main():
    global BIN
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--out", default=None)
    ap.add_argument("--bin", default=BIN)
    a = ap.parse_args()
    BIN = a.bin
    names = a.cases.split(",")
    for n in names:
        if n not in CASES:
            sys.exit(f"test_spread: no case {n!r}; cases: {', '.join(CASES)}")
    tb = f"spr{os.getpid() % 100000}"
    fwbench(["testbed", "up", "--name", tb, "--topology", "forward"])
    rows = []
    out = open(a.out, "a") if a.out else None
    try:
        for rep in range(a.reps):
            for n in names:
                load = loadavg()
                t0 = time.time()
                try:
                    q = CASES[n](tb)
                    err = None
                except Exception as e:  # a failed trial is a measurement too
                    q, err = {}, str(e)[:300]
                row = {"case": n, "rep": rep, "load": load, "secs": round(time.time() - t0, 1),
                       "q": q, "error": err}
                rows.append(row)
                line = json.dumps(row)
                print(line, flush=True)
                if out:
                    out.write(line + "\n")
                    out.flush()
    finally:
        fwbench(["testbed", "down", "--name", tb], ok=False)
    summary(rows)


def summary(rows):
    print(f"\n{'quantity':<34} {'n':>3} {'mean':>12} {'sd':>10} {'min':>12} {'max':>12}  load")
    keys = []
    for r in rows:
        for k in r["q"]:
            if (r["case"], k) not in keys:
                keys.append((r["case"], k))
    for case, k in keys:
        xs = [r["q"][k] for r in rows if r["case"] == case and r["q"].get(k) is not None]
        loads = [r["load"] for r in rows if r["case"] == case]
        if not xs:
            continue
        sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
        print(f"{case + '.' + k:<34} {len(xs):>3} {statistics.mean(xs):>12.4g} {sd:>10.3g} "
              f"{min(xs):>12.4g} {max(xs):>12.4g}  {min(loads):.1f}-{max(loads):.1f}")
    errs = [r for r in rows if r["error"]]
    for r in errs:
        print(f"error: {r['case']} rep {r['rep']} (load {r['load']}): {r['error']}")


if __name__ == "__main__":
    main()
