#!/usr/bin/env python3
"""Summarises bench/serve.sh's runs: medians, spreads and per-round ratios, and the targets.

usage: summarize.py serve-runs.csv serve-versions.txt serve-summary.csv  (markdown on stdout)

Ratios pair the runs of the same round and scenario: req/s ratio = herd's req/s / the other's;
CPU ratio = the other's server CPU per request / herd's (so > 1 means herd is cheaper, on both).
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchstats import fnum, med  # noqa: E402  (bench/benchstats.py, shared with bench/summarize.py)

runs_csv, versions, out_csv = sys.argv[1:4]
rows = list(csv.DictReader(open(runs_csv)))

REF = {"ka-6397": "herd", "close-6397": "herd", "9x9": "herd-9x9"}
ORDER = ["herd", "nginx", "nginx-ofc", "nginx-deferred", "lighttpd", "herd-9x9", "herd-static", "nginx-php", "apache-php"]
DESC = {
    "herd": "herd serve --threads 1",
    "nginx": "nginx, 1 worker",
    "nginx-ofc": "nginx + open_file_cache",
    "nginx-deferred": "nginx, listen … deferred",
    "lighttpd": "lighttpd",
    "herd-9x9": "herd serve /9x9 (computed)",
    "herd-static": "herd serve /9x9.html (static, same bytes)",
    "nginx-php": "9x9.php: nginx + php-fpm",
    "apache-php": "9x9.php: Apache (event) + php-fpm",
}
SCEN_DESC = {
    "ka-6397": "keep-alive, 6397 B",
    "close-6397": "Connection: close, 6397 B",
    "9x9": "9x9 page, 1692 B, keep-alive",
}
# (scenario, other, minimum herd/other req/s ratio, label)
TARGETS = [
    ("ka-6397", "nginx", 1.0, "keep-alive 6397 B: herd ≥ 1.0 × nginx"),
    ("ka-6397", "lighttpd", 1.0, "keep-alive 6397 B: herd ≥ lighttpd"),
    ("close-6397", "nginx", 1.0, "Connection: close 6397 B: herd ≥ 1.0 × nginx"),
    ("9x9", "herd-static", 0.9, "/9x9 ≥ 0.9 × the same bytes as a static file"),
    ("9x9", "nginx-php", 3.0, "/9x9 ≥ 3 × PHP (nginx + php-fpm)"),
]
INFO = [
    ("ka-6397", "nginx-ofc", "keep-alive 6397 B: herd vs nginx + open_file_cache"),
    ("close-6397", "nginx-ofc", "Connection: close: herd vs nginx + open_file_cache"),
    ("close-6397", "nginx-deferred", "Connection: close: herd vs nginx with deferred accept"),
    ("close-6397", "lighttpd", "Connection: close: herd vs lighttpd"),
    ("9x9", "apache-php", "/9x9 vs PHP (Apache + php-fpm)"),
]


def spread(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


def rtxt(xs):
    """'x1.234 (1.100–1.300)' for per-round ratios, '–' when there are none."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    return f"x{med(xs):.3f} ({min(xs):.3f}–{max(xs):.3f})"


def yes(xs, goal):
    m = med(xs)
    return "–" if m is None else ("yes" if m >= goal else "**no**")


def fmt(x, p=0):
    if x is None:
        return "–"
    return f"{x:,.{p}f}"


by = defaultdict(list)           # (scen, server) -> rows
byround = defaultdict(dict)      # (scen, round) -> server -> row
for r in rows:
    by[(r["scenario"], r["server"])].append(r)
    byround[(r["scenario"], r["round"])][r["server"]] = r

scens = [s for s in REF if any(k[0] == s for k in by)]


def ratios(scen, other):
    """Per-round herd/other req/s ratios and other/herd CPU-per-request ratios."""
    rr, cr = [], []
    for (s, _), d in sorted(byround.items()):
        if s != scen or REF[scen] not in d or other not in d:
            continue
        h, o = d[REF[scen]], d[other]
        if fnum(h["rps"]) and fnum(o["rps"]):
            rr.append(fnum(h["rps"]) / fnum(o["rps"]))
        if fnum(h["srv_cpu_us_per_req"]) and fnum(o["srv_cpu_us_per_req"]):
            cr.append(fnum(o["srv_cpu_us_per_req"]) / fnum(h["srv_cpu_us_per_req"]))
    return rr, cr


out = []
w = out.append
versions_txt = open(versions).read().strip()
nrounds = len({r["round"] for r in rows})
w(f"# herd serve vs nginx, lighttpd and PHP ({nrounds} round(s))\n")
w("```\n" + versions_txt + "\n```\n")
w("req/s: wrk's `Requests/sec`, median of the rounds (min–max). Server CPU: CPU time of the server's")
w("processes per request (/proc/PID/task/*/schedstat; PHP rows: nginx or Apache plus the php-fpm pool).")
w("wrk CPU: wrk's user+sys per request and as a share of CPU 1. CPU 0: how busy the servers' core was.")
w("Ratios pair the runs of the same round: req/s ratio = herd / other; CPU ratio = other's CPU per request")
w("/ herd's (both > 1 when herd is better).\n")

csv_rows = []
errors = sum(int(r["sock_errors"] or 0) + int(r["non2xx"] or 0) for r in rows)
for scen in scens:
    w(f"## {scen}: {SCEN_DESC[scen]}\n")
    w("| server | req/s median (min–max) | server CPU µs/req (min–max) | wrk CPU µs/req | wrk % of CPU 1 | CPU 0 busy % | conns/run | req/s ratio herd/this (min–max) | CPU ratio this/herd (min–max) |")
    w("|---|---|---|---|---|---|---|---|---|")
    servers = sorted({k[1] for k in by if k[0] == scen}, key=ORDER.index)
    for srv in servers:
        rs = by[(scen, srv)]
        rps = [fnum(r["rps"]) for r in rs]
        cpu = [fnum(r["srv_cpu_us_per_req"]) for r in rs]
        wcpu = [fnum(r["wrk_cpu_us_per_req"]) for r in rs]
        wpct = [fnum(r["wrk_cpu_pct"]) for r in rs]
        b0 = [fnum(r["cpu0_busy_pct"]) for r in rs]
        conns = [fnum(r["srv_conns"]) for r in rs]
        lo, hi = spread(rps)
        clo, chi = spread(cpu)
        if srv == REF[scen]:
            rr = cr = []
            rtx = ctxt = "(reference)"
        else:
            rr, cr = ratios(scen, srv)
            rtx, ctxt = rtxt(rr), rtxt(cr)
        w(f"| {DESC.get(srv, srv)} | {fmt(med(rps))} ({fmt(lo)}–{fmt(hi)}) | {fmt(med(cpu), 2)} ({fmt(clo, 2)}–{fmt(chi, 2)}) "
          f"| {fmt(med(wcpu), 2)} | {fmt(med(wpct))} | {fmt(med(b0))} | {fmt(med(conns))} | {rtx} | {ctxt} |")
        csv_rows.append({
            "scenario": scen, "server": srv, "runs": len(rs),
            "rps_median": med(rps), "rps_min": lo, "rps_max": hi,
            "srv_cpu_us_per_req_median": med(cpu), "srv_cpu_us_per_req_min": clo, "srv_cpu_us_per_req_max": chi,
            "wrk_cpu_us_per_req_median": med(wcpu), "wrk_cpu_pct_median": med(wpct), "cpu0_busy_pct_median": med(b0),
            "conns_per_run_median": med(conns),
            "rps_ratio_ref_over_this_median": med(rr), "rps_ratio_min": spread(rr)[0], "rps_ratio_max": spread(rr)[1],
            "cpu_ratio_this_over_ref_median": med(cr), "cpu_ratio_min": spread(cr)[0], "cpu_ratio_max": spread(cr)[1],
        })
    w("")

w("## Targets\n")
w("| target | req/s ratio, median (min–max) | CPU-per-request ratio, median (min–max) | met on req/s | met on CPU |")
w("|---|---|---|---|---|")
for scen, other, goal, label in TARGETS:
    rr, cr = ratios(scen, other)
    if not rr:
        w(f"| {label} | not measured | | | |")
        continue
    w(f"| {label} | {rtxt(rr)} | {rtxt(cr)} | {yes(rr, goal)} | {yes(cr, goal)} |")
for scen, other, label in INFO:
    rr, cr = ratios(scen, other)
    if rr:
        w(f"| (info) {label} | {rtxt(rr)} | {rtxt(cr)} | | |")
w("")
w(f"Socket errors + non-2xx responses over all runs: {errors}.")
w("A run is client-bound when wrk uses ~100 % of CPU 1 while CPU 0 is not saturated: its req/s then says")
w("more about wrk than about the server, and the CPU-per-request ratio is the fairer comparison.")

with open(out_csv, "w", newline="") as fh:
    wr = csv.DictWriter(fh, fieldnames=list(csv_rows[0].keys()) if csv_rows else ["scenario"])
    wr.writeheader()
    for r in csv_rows:
        wr.writerow({k: ("%.4f" % v if isinstance(v, float) else v) for k, v in r.items()})
print("\n".join(out))
