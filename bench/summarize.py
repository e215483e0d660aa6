#!/usr/bin/env python3
"""Summarise bench/run.sh's runs.csv as Markdown tables (printed to stdout).

usage: summarize.py runs.csv [versions.txt]

Figures per scenario and tool: medians over rounds. "x floor" pairs each run with the floor run
nearest in time in the same scenario (baseline.md section 3) and takes the median of the ratios.
herd's ratios to wrk and ab pair the runs of the same round and scenario.
"""
import csv
import statistics
import sys
from collections import defaultdict

from benchstats import fnum, med

TOOL_ORDER = ["floor", "herd", "herd-default", "herd-run", "herd-run-uring", "wrk", "ab", "h2load",
              "gcannon", "herd-run-p16", "herd-run-uring-p16", "gcannon-p16",
              "herd-h2c", "herd-h2c-uring", "h2load-h2c", "herd-h2", "h2load-h2", "herd-h3", "oha-h3"]
# issue 19: each multiplexing herd tool against its peer, with the req/s target of the issue
MUX_PAIRS = [("herd-h2c", "h2load-h2c", "HTTP/2 h2c, nginx"),
             ("herd-h2c-uring", "h2load-h2c", "HTTP/2 h2c, herd on io_uring, nginx"),
             ("herd-h2", "h2load-h2", "HTTP/2 over TLS, nginx"),
             ("herd-h3", "oha-h3", "HTTP/3, caddy")]
SCEN_ORDER = ["ka-6397-c100", "ka-1B-c100", "ka-1MiB-c100", "close-6397-c100", "ka-6397-c100-p16",
              "ka-1B-c100-p16"]
# issue 35's table: (its row, the keep-alive tool, the pipelined tool or None)
ISSUE35_ROWS = [("herd run (epoll)", "herd-run", "herd-run-p16"),
                ("herd run (io_uring)", "herd-run-uring", "herd-run-uring-p16"),
                ("the floor (bench/floor.c)", "floor", None),
                ("gcannon (io_uring)", "gcannon", "gcannon-p16")]
LABEL = {
    "herd": "herd ab --threads 1",
    "herd-default": "herd ab, default (2 threads, unpinned)",
    "herd-run": "herd run -t 1",
    "herd-run-p16": "herd run -t 1 --pipeline 16",
    "herd-run-uring": "herd run -t 1 --io uring",
    "herd-run-uring-p16": "herd run -t 1 --pipeline 16 --io uring",
    "herd-h2c-uring": "herd run --h2c -t 1 --io uring",
    "gcannon": "gcannon -t 1 (io_uring)",
    "gcannon-p16": "gcannon -t 1 -p 16 (io_uring)",
    "herd-h2c": "herd run --h2c -t 1",
    "h2load-h2c": "h2load -t1 (h2c)",
    "herd-h2": "herd run --h2 -k -t 1",
    "h2load-h2": "h2load -t1 (h2, TLS)",
    "herd-h3": "herd run --h3 -k -t 1",
    "oha-h3": "oha --http-version 3",
}


def mux_target(scen, herd):
    """The issue-19 req/s bar for herd's tool in this scenario: h3 1.5x, h2/h2c 1.3x at -m > 1, 1.1x at -m 1."""
    if herd == "herd-h3":
        return 1.5
    return 1.1 if scen.endswith("-m1") else 1.3


def fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def fmt_range(xs, nd=1):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    m = statistics.median(xs)
    if len(xs) == 1:
        return fmt(m, nd)
    return f"{fmt(m, nd)} ({fmt(min(xs), nd)}-{fmt(max(xs), nd)})"


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    for r in rows:
        r["t"] = float(r["start_unix"]) + (fnum(r["seconds"]) or 0) / 2
        r["cpu"] = fnum(r["cpu_us_per_req"])
        r["cg"] = fnum(r["cg_cpu_us_per_req"])
        r["rps_f"] = fnum(r["rps"])
        r["ngx"] = fnum(r["nginx_cpu_us_per_req"])
        req = int(r["requests"] or 0)
        u = fnum(r["user"])
        r["user_us"] = u / req * 1e6 if (u is not None and req) else None
        r["ok"] = r["rc"] == "0" and req > 0
        r["steal"] = fnum(r.get("cpu1_steal_pct"))
    bench = [r for r in rows if not r["scenario"].startswith("mem-")]
    mem = [r for r in rows if r["scenario"].startswith("mem-")]

    by = defaultdict(list)
    for r in bench:
        if r["ok"]:
            by[(r["scenario"], r["tool"])].append(r)
    scens = [s for s in SCEN_ORDER if any(k[0] == s for k in by)] + sorted(
        {k[0] for k in by} - set(SCEN_ORDER))
    # A tool the order does not know is still shown, after the others, by its own name.
    tools = [t for t in TOOL_ORDER if any(k[1] == t for k in by)] + sorted(
        {k[1] for k in by} - set(TOOL_ORDER))

    def nearest_floor(r):
        fl = by.get((r["scenario"], "floor"), [])
        return min(fl, key=lambda f: abs(f["t"] - r["t"])) if fl else None

    def paired(scen, tool, key):
        out = []
        for r in by.get((scen, tool), []):
            f = nearest_floor(r)
            if f and r[key] is not None and f[key]:
                out.append(r[key] / f[key])
        return out

    def same_round(scen, a, b, key):
        rb = {r["round"]: r for r in by.get((scen, b), [])}
        out = []
        for r in by.get((scen, a), []):
            o = rb.get(r["round"])
            if o and r[key] is not None and o[key]:
                out.append(r[key] / o[key])
        return out

    p = print
    if len(sys.argv) > 2:
        p("### Machine and versions\n")
        p("```")
        p(open(sys.argv[2]).read().rstrip())
        p("```\n")

    p("### Client CPU per request and req/s under the CPU quota (medians over rounds, min-max in brackets)\n")
    p("CPU/request = (user+sys of the client process tree, from wait4() with µs resolution: the same figure as "
      "/usr/bin/time's %U+%S, whose 10 ms figures are kept in raw/*.time) / completed requests. "
      "\"x floor\" = median of each run's figure / the floor run nearest in time (same scenario). "
      "req/s is client-bound here (quota), so x floor req/s ≈ 1 / x floor CPU.\n")
    for scen in scens:
        p(f"#### {scen}\n")
        p("| tool | runs | client CPU µs/req | x floor CPU | req/s | x floor req/s | user µs/req | "
          "cgroup CPU µs/req | nginx CPU µs/req | client+nginx µs/req | peak RSS MiB | failed | CPU1 steal % |")
        p("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for tool in tools:
            rs = by.get((scen, tool), [])
            if not rs:
                continue
            tot = [r["cpu"] + r["ngx"] for r in rs if r["cpu"] is not None and r["ngx"] is not None]
            rss = [fnum(r["max_rss_kb"]) / 1024 for r in rs if fnum(r["max_rss_kb"])]
            fails = sum(int(r["failed"] or 0) for r in rs)
            p(f"| {LABEL.get(tool, tool)} | {len(rs)} | {fmt_range([r['cpu'] for r in rs], 2)} | "
              f"x{fmt(med(paired(scen, tool, 'cpu')), 2)} | {fmt_range([r['rps_f'] for r in rs], 0)} | "
              f"x{fmt(med(paired(scen, tool, 'rps_f')), 2)} | {fmt(med([r['user_us'] for r in rs]), 2)} | "
              f"{fmt(med([r['cg'] for r in rs]), 2)} | {fmt(med([r['ngx'] for r in rs]), 2)} | "
              f"{fmt(med(tot), 1)} | {fmt(med(rss), 1)} | {fails} | {fmt(med([r['steal'] for r in rs]), 1)} |")
        bad = [r for r in bench if r["scenario"] == scen and not r["ok"]]
        if bad:
            p(f"\nRuns excluded (non-zero exit or no requests): " +
              ", ".join(f"{r['tool']} r{r['round']} (rc {r['rc']})" for r in bad))
        p("")

    herds = [h for h in ("herd", "herd-default", "herd-run") if h in tools]
    if herds:
        p("### herd ab and herd run against wrk, ab and the floor (paired ratios, median over rounds)\n")
        p("req/s ratio: herd / other (higher is better for herd). CPU ratio: herd / other (lower is better).\n")
        p("| scenario | herd | req/s x wrk | req/s x ab | req/s x h2load | req/s x floor | CPU x wrk | CPU x ab | CPU x floor |")
        p("|---|---|---|---|---|---|---|---|---|")
        for scen in scens:
            for h in herds:
                if not by.get((scen, h)):
                    continue
                p(f"| {scen} | {LABEL[h]} | x{fmt(med(same_round(scen, h, 'wrk', 'rps_f')), 2)} | "
                  f"x{fmt(med(same_round(scen, h, 'ab', 'rps_f')), 2)} | "
                  f"x{fmt(med(same_round(scen, h, 'h2load', 'rps_f')), 2)} | "
                  f"x{fmt(med(paired(scen, h, 'rps_f')), 2)} | "
                  f"x{fmt(med(same_round(scen, h, 'wrk', 'cpu')), 2)} | "
                  f"x{fmt(med(same_round(scen, h, 'ab', 'cpu')), 2)} | "
                  f"x{fmt(med(paired(scen, h, 'cpu')), 2)} |")
        p("")

        def chk(ok):
            return "-" if ok is None else ("✓" if ok else "✗")

        def ratio(scen, other, key="rps_f"):
            if other == "floor":
                return med(paired(scen, "herd", key))
            return med(same_round(scen, "herd", other, key))

        p("### Targets (issue 2, client-bound; herd ab --threads 1)\n")
        p("A target is met only if it holds on both figures: the req/s ratio under the quota and the "
          "inverse of the client CPU/request ratio (both paired, medians over rounds).\n")
        p("| target | req/s ratio | 1 / CPU-per-request ratio | met |")
        p("|---|---|---|---|")
        targets = [
            ("ka-6397-c100", "wrk", 1.05, "keep-alive -c 100, 6397 B: ≥ 1.05 × wrk"),
            ("ka-6397-c100", "ab", 1.05, "keep-alive -c 100, 6397 B: ≥ 1.05 × ab"),
            ("ka-6397-c100", "floor", 0.95, "keep-alive -c 100, 6397 B: within 5 % of the floor (≥ 0.95 × floor)"),
            ("ka-1MiB-c100", "wrk", 1.15, "keep-alive 1 MiB: ≥ 1.15 × wrk"),
            ("ka-1MiB-c100", "ab", 2.5, "keep-alive 1 MiB: ≥ 2.5 × ab"),
            ("close-6397-c100", "ab", 1.0, "new connection per request, -c 100: ≥ 1.0 × ab"),
            ("close-6397-c100", "floor", 0.95, "new connection per request, -c 100: within 5 % of the floor"),
        ]
        for scen, other, bar, text in targets:
            x = ratio(scen, other)
            c = ratio(scen, other, "cpu")
            inv = 1 / c if c else None
            ok = None if x is None or inv is None else (x >= bar and inv >= bar)
            p(f"| {text} | x{fmt(x, 3)} | x{fmt(inv, 3)} (CPU/request x{fmt(c, 3)}) | {chk(ok)} |")
        for r in mem:
            rss = fnum(r["max_rss_kb"])
            p(f"| memory: herd ab -n 1000000 -c 1000 -k (defaults), peak RSS < 64 MB | "
              f"{fmt(rss / 1024 if rss else None, 1)} MiB ({r['max_rss_kb']} KiB) | {r['requests']} requests "
              f"in {r['seconds']} s, failed {r['failed']}, rc {r['rc']} | "
              f"{chk(None if not rss or not r['ok'] else rss * 1024 < 64e6)} |")
        p("")

    mux_section(by, scens)
    issue35_section(by)


def issue35_section(by):
    """issue 35: herd run, the floor and gcannon, keep-alive and pipelined 16, same rounds."""
    p = print
    for size in ("6397", "1B"):
        ka, pl = f"ka-{size}-c100", f"ka-{size}-c100-p16"
        if not any(by.get((s, t)) for s in (ka, pl) for t in ("gcannon", "gcannon-p16", "herd-run-p16")):
            continue

        def rounds(scen, tool):
            return {r["round"]: r for r in by.get((scen, tool), [])}

        def cell(scen, tool, key, nd):
            rs = [r[key] for r in by.get((scen, tool), []) if r[key] is not None]
            return fmt_range(rs, nd) if rs else "—"

        def ratio(scen, a, b, key, invert=False):
            ra, rb = rounds(scen, a), rounds(scen, b)
            xs = [(rb[k][key] / ra[k][key]) if invert else (ra[k][key] / rb[k][key])
                  for k in ra if k in rb and ra[k][key] and rb[k][key]]
            if not xs:
                return "—"
            return f"x{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f}; {len(xs)} rounds)"

        p(f"### Issue 35's table ({size} B, -c 100, one thread; medians over rounds, min-max)\n")
        p("Requests: the client's own count, nginx's for gcannon (which zeroes its counters "
          "100 ms after its start); req/s = requests / the run's wall time.\n")
        p("Client-bound check: the client's CPU in % of one core (CPU/request × req/s). Under "
          "the 25 % quota a client-bound run is near 25 % and throttled; well below, something "
          "else (nginx, or a busy machine) held it back and req/s says little about the client.\n")
        p("| client | req/s, keep-alive | req/s, pipelined 16 | CPU µs/req, keep-alive | CPU µs/req, pipelined 16 | "
          "client CPU %, keep-alive / pipelined | load average (1 min) |")
        p("|---|---|---|---|---|---|---|")
        for label, t_ka, t_pl in ISSUE35_ROWS:
            def share(scen, tool):
                xs = [r["cpu"] * r["rps_f"] / 1e4 for r in by.get((scen, tool), [])
                      if r["cpu"] is not None and r["rps_f"]]
                return fmt(med(xs), 1) if xs else "—"
            las = [fnum(r.get("loadavg1")) for s, t in ((ka, t_ka), (pl, t_pl)) if t
                   for r in by.get((s, t), []) if fnum(r.get("loadavg1")) is not None]
            p(f"| {label} | {cell(ka, t_ka, 'rps_f', 0)} | {cell(pl, t_pl, 'rps_f', 0) if t_pl else '—'} | "
              f"{cell(ka, t_ka, 'cpu', 2)} | {cell(pl, t_pl, 'cpu', 2) if t_pl else '—'} | "
              f"{share(ka, t_ka)} / {share(pl, t_pl) if t_pl else '—'} | "
              f"{f'{min(las):.1f}-{max(las):.1f}' if las else '—'} |")
        p("")
        p("Same-round ratios, herd run's req/s / the other's (and the other's CPU per request / "
          "herd run's):\n")
        p("| comparison | req/s ratio | CPU/request ratio |")
        p("|---|---|---|")
        for text, scen, a, b in [("keep-alive: herd run / the floor", ka, "herd-run", "floor"),
                                 ("keep-alive: herd run / gcannon", ka, "herd-run", "gcannon"),
                                 ("pipelined 16: herd run / gcannon", pl, "herd-run-p16", "gcannon-p16"),
                                 ("keep-alive: herd run on io_uring / the floor", ka, "herd-run-uring", "floor"),
                                 ("keep-alive: herd run on io_uring / gcannon", ka, "herd-run-uring", "gcannon"),
                                 ("pipelined 16: herd run on io_uring / gcannon", pl, "herd-run-uring-p16",
                                  "gcannon-p16")]:
            p(f"| {text} | {ratio(scen, a, b, 'rps_f')} | {ratio(scen, a, b, 'cpu', invert=True)} |")
        p("")


def mux_section(by, scens):
    """issue 19: herd against h2load (h2c, h2) and oha (h3), paired by round."""
    p = print
    lines = []
    for scen in scens:
        for herd, peer, what in MUX_PAIRS:
            hs = {r["round"]: r for r in by.get((scen, herd), [])}
            ps = {r["round"]: r for r in by.get((scen, peer), [])}
            common = sorted(set(hs) & set(ps), key=int)
            if not common:
                continue
            rps = [hs[k]["rps_f"] / ps[k]["rps_f"] for k in common if hs[k]["rps_f"] and ps[k]["rps_f"]]
            cpu = [ps[k]["cpu"] / hs[k]["cpu"] for k in common if hs[k]["cpu"] and ps[k]["cpu"]]
            bar = mux_target(scen, herd)
            x, inv = med(rps), med(cpu)
            ok = None if x is None or inv is None else (x >= bar and inv >= bar)
            rss = med([fnum(hs[k]["max_rss_kb"]) for k in common])
            lines.append(
                f"| {scen} | {what} | {len(common)} | {fmt(med([hs[k]['rps_f'] for k in common]), 0)} | "
                f"{fmt(med([ps[k]['rps_f'] for k in common]), 0)} | x{fmt(x, 3)} "
                f"({fmt(min(rps) if rps else None, 2)}-{fmt(max(rps) if rps else None, 2)}) | "
                f"{fmt(med([hs[k]['cpu'] for k in common]), 2)} | {fmt(med([ps[k]['cpu'] for k in common]), 2)} | "
                f"x{fmt(inv, 3)} | {fmt(rss / 1024 if rss else None, 1)} | ≥ {bar} | "
                f"{'-' if ok is None else ('✓' if ok else '✗')} |")
    if not lines:
        return
    p("### HTTP/2 and HTTP/3 (issue 19): herd against its peer, paired by round\n")
    p("req/s ratio = herd / peer under the quota (median of the rounds' ratios, min-max); CPU ratio = peer's "
      "client CPU µs/request / herd's (higher is better for herd). A target holds only if both ratios reach it.\n")
    p("| scenario | protocol | rounds | herd req/s | peer req/s | req/s x peer | herd CPU µs/req | "
      "peer CPU µs/req | 1 / CPU ratio | herd peak RSS MiB | target | met |")
    p("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for line in lines:
        p(line)
    p("")


if __name__ == "__main__":
    main()
