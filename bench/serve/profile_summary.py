#!/usr/bin/env python3
"""Summarises bench/serve.sh PROFILE=1: per-request syscalls, task-clock, context switches and
TCP segments of each server, from raw/profile-<scenario>-<server>.{perf,out,tcp}.

usage: profile_summary.py RESULTS/raw   (markdown on stdout)
"""
import glob
import os
import re
import sys

raw = sys.argv[1]
rows = {}
names = set()
def read_perf(path, prefix=""):
    d = {}
    if not os.path.exists(path):
        return d
    for line in open(path):
        parts = line.strip().split(",")
        if len(parts) < 3 or line.startswith("#"):
            continue
        try:
            v = float(parts[0])
        except ValueError:
            continue
        ev = parts[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "all syscalls")
        d[prefix + ev] = v
    return d


WRK = ["wrk: task-clock", "wrk: context-switches", "wrk: all syscalls"]
for f in sorted(glob.glob(os.path.join(raw, "profile-*.perf"))):
    if f.endswith(".wrk.perf"):
        continue
    key = os.path.basename(f)[len("profile-"):-len(".perf")]
    out = open(f[:-5] + ".out").read()
    m = re.search(r"(\d+) requests in", out)
    req = int(m.group(1)) if m else 0
    d = read_perf(f)
    w = read_perf(f[:-5] + ".wrk.perf", "wrk: ")
    d.update({k: v for k, v in w.items() if k in WRK})
    # the client's syscalls by name, for those that differ between servers
    d.update({k: v for k, v in w.items() if k not in WRK and k.startswith("wrk: ")})
    try:
        (a0, r0), (a1, r1) = [tuple(map(int, l.split())) for l in open(f[:-5] + ".tcp")][:2]
        d["TCP segments (both sides)"], d["TCP RSTs"] = a1 - a0, r1 - r0
    except Exception:
        pass
    rows[key] = (req, d)
    names.update(d)
SCEN = ["ka-6397", "close-6397", "9x9"]
SRV = ["herd", "nginx", "nginx-ofc", "lighttpd", "herd-9x9", "herd-static", "nginx-php", "apache-php"]


def order_key(k):
    for i, sc in enumerate(SCEN):
        if k.startswith(sc + "-"):
            srv = k[len(sc) + 1:]
            return (i, SRV.index(srv) if srv in SRV else len(SRV), srv)
    return (len(SCEN), 0, k)


keys = sorted(rows, key=order_key)
print("# herd serve vs the others: syscalls and CPU per request (perf stat -p on the servers)\n")
print("Counts of the server's processes during one wrk run, divided by wrk's requests. task-clock in us;")
print("TCP segments and RSTs: machine-wide /proc/net/snmp deltas (on loopback, both directions).")
print("Rows starting with 'wrk:' are the client's own counts (perf stat around wrk), per request.\n")
print("| per request | " + " | ".join(keys) + " |")
print("|---|" + "---|" * len(keys))
print("| requests | " + " | ".join(str(rows[k][0]) for k in keys) + " |")
first = ["task-clock", "context-switches", "TCP segments (both sides)", "TCP RSTs", "all syscalls"]
order = first + sorted(n for n in names if n not in first and not n.startswith("wrk: "))
order += WRK + sorted(n for n in names if n.startswith("wrk: ") and n not in WRK)
for n in order:
    vals = []
    show = False
    for k in keys:
        req, d = rows[k]
        v = d.get(n)
        if v is None or not req:
            vals.append("–")
            continue
        x = v / req
        if n in ("task-clock", "wrk: task-clock"):
            x = v * 1000 / req  # msec -> us
        if x >= 0.005:
            show = True
        vals.append("%.3f" % x if x < 10 else "%.1f" % x)
    if show:
        print(f"| {n} | " + " | ".join(vals) + " |")
