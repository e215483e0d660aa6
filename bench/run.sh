#!/usr/bin/env bash
# herd benchmark harness: herd ab vs the syscall floor, wrk, ab and h2load against one nginx.
#
# usage: bench/run.sh [PORT]            (PORT: a free port for nginx; default: first free of 18080-18179)
# env:   QUICK=1          smoke run (1 round, 1/5 of the requests, ~1-2 min) instead of the full run (~10-15 min)
#        ROUNDS=N         rounds per scenario (default 5, QUICK: 1)
#        QUOTA_PCT=25     client CPU quota in % of one CPU (cgroup cpu.max / cpu.cfs_quota_us)
#        TOOLS="floor wrk ab herd herd-default h2load"   which clients (missing ones are skipped;
#                         herd-run: `herd run -t 1`, the modern mode, in the same seat;
#                         HTTP/2 and HTTP/3 (issue 19): herd-h2c h2load-h2c herd-h2 h2load-h2 herd-h3 oha-h3;
#                         issue 35: gcannon (io_uring, built on first use from the shared
#                         copy, runs WRK_S s), and pipelined herd-run-p16 gcannon-p16)
#        SCENARIOS="ka-6397-c100 ka-1MiB-c100 close-6397-c100"   (multiplexed: mux-6397-c10-m10, mux-1B-c100-m1, ...;
#                         pipelined, depth 16: ka-6397-c100-p16, ka-1B-c100-p16. Each round
#                         runs every tool in every scenario it fits (bench/lib.sh's fits): a
#                         -p16 tool only in a -p16 scenario. Issue 35's table:
#                         TOOLS="floor herd-run gcannon herd-run-p16 gcannon-p16"
#                         SCENARIOS="ka-6397-c100 ka-6397-c100-p16")
#        H3_DIV=3         HTTP/3 tools run the scenario's requests / H3_DIV
#        OHA=path         oha built with --features http3 (default /tmp/oha/bin/oha)
#        HERD=path        the herd binary (default: target/dist/herd)
#        MEMCHECK=0       skip the herd memory check (1 000 000 requests, -c 1000, -k)
#
# Set-up (see ../BENCHMARKS.md and /work/shared/docs/baseline.md section 3): nginx, 1 worker pinned to CPU 0
# (also h2c and h2-over-TLS listeners); for the HTTP/3 tools caddy, GOMAXPROCS=1, pinned to CPU 0.
# Each client runs pinned to CPU 1 (taskset -c 1; herd-default: not pinned), inside a cgroup whose CPU quota
# (25 % by default) makes the client, not nginx, the bottleneck: req/s then measures the client's cost.
# Rounds: every tool once per scenario, order rotated by one each round. Output: bench/results/<date>/.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

QUICK=${QUICK:-0}
if [[ $QUICK == 1 ]]; then
    ROUNDS=${ROUNDS:-1}; SCALE_DIV=5; WRK_S=${WRK_S:-1}
else
    ROUNDS=${ROUNDS:-5}; SCALE_DIV=1; WRK_S=${WRK_S:-4}
fi
QUOTA_PCT=${QUOTA_PCT:-25}
PERIOD_US=100000
QUOTA_US=$((PERIOD_US * QUOTA_PCT / 100))
HERD=${HERD:-$ROOT/target/dist/herd}
TOOLS=${TOOLS:-floor wrk ab herd herd-default h2load}
SCENARIOS=${SCENARIOS:-ka-6397-c100 ka-1MiB-c100 close-6397-c100}
MEMCHECK=${MEMCHECK:-1}
PAUSE_S=${PAUSE_S:-1}
RUN_LIMIT_S=${RUN_LIMIT_S:-120}   # hard bound per run: the whole process group is killed after this

STAMP=$(date +%Y-%m-%d-%H%M%S)
RES=$BENCH_HERE/results/$STAMP$([[ $QUICK == 1 ]] && echo -quick || true)
mkdir -p "$RES/raw"
CSV=$RES/runs.csv

CUR_PIDFILE=
cleanup() {
    local rc=$?
    # a run still going (interrupted): stop its timeout process, which signals its own process group
    if [[ -n $CUR_PIDFILE && -s $CUR_PIDFILE ]]; then
        local p
        p=$(cat "$CUR_PIDFILE")
        if kill -0 "$p" 2>/dev/null; then kill -TERM "$p" 2>/dev/null || true; sleep 1; fi
    fi
    if [[ -n $BENCH && -f $BENCH/error.log ]]; then cp "$BENCH/error.log" "$RES/nginx-error.log" 2>/dev/null || true; fi
    bench_cleanup
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ulimit -n "$(ulimit -Hn)"   # the memory check needs > 1000 descriptors

bench_setup "${1:-}"
if [[ " $TOOLS " == *-h3\ * ]]; then caddy_setup; fi
cg_setup "$QUOTA_US" "$PERIOD_US"

detect_tools
log "tools: ${active[*]}; scenarios: $SCENARIOS; rounds: $ROUNDS; quota: ${QUOTA_PCT}% ($CG_MODE)"

# --- versions and machine ---------------------------------------------------------------
{
    echo "date: $(date -Is)"
    echo "nproc: $(nproc)"
    echo "cpu: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
    echo "kernel: $(uname -srvm)"
    echo "debian: $(cat /etc/debian_version)"
    echo "nginx: $(nginx -v 2>&1)"
    echo "wrk: $(wrk -v 2>&1 | head -1 || true)"
    echo "ab: $(ab -V 2>&1 | head -1 || true)"
    echo "h2load: $(h2load --version 2>&1 | head -1 || true)"
    echo "caddy: $(caddy version 2>&1 | head -1 || true)"
    echo "oha: $([[ -x $OHA ]] && "$OHA" --version 2>&1 | head -1 || echo "n/a ($OHA)")"
    echo "openssl: $(openssl version 2>&1)"
    herd_versions "herd=$HERD" ${HERD_BASE:+"herd-base=$HERD_BASE"}
    [[ " ${active[*]} " == *" gcannon"* ]] && gcannon_version
    [[ $herd_ok == 1 ]] || echo "herd: does not work here; its tools were skipped"
    echo "command: QUICK=$QUICK ROUNDS=$ROUNDS QUOTA_PCT=$QUOTA_PCT MEMCHECK=$MEMCHECK TOOLS=\"$TOOLS\" SCENARIOS=\"$SCENARIOS\" bench/run.sh${1:+ $1}"
    echo "gcc: $(gcc --version | head -1)"
    echo "GNU time: $(/usr/bin/time --version 2>&1 | head -1)"
    echo "cgroup: $CG_MODE $CG_CPU quota ${QUOTA_US}/${PERIOD_US}"
    echo "ulimit -n: $(ulimit -n)"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/versions.txt"

echo "seq,start_unix,tool,scenario,round,requests,seconds,rps,user,sys,cpu_us_per_req,max_rss_kb,cg_cpu_us_per_req,throttled_periods,nginx_cpu_us_per_req,nginx_accepts,nginx_requests,failed,rc,cpu1_steal_pct,loadavg1" >"$CSV"
SEQ=0

run_one() {
    local tool=$1 scen=$2 round=$3 quota=${4:-1}
    SEQ=$((SEQ + 1))
    local id base
    id=$(printf '%03d-%s-%s-r%s' "$SEQ" "$scen" "$tool" "$round")
    base=$RES/raw/$id
    build_cmd "$tool" "$scen"
    local s0 s1 ns0 ns1 cg0 cg1 th0 th1 st0 st1 t0 rc=0 cgopt=() note
    if [[ $quota == 1 ]]; then
        [[ -n $CG_CPU ]] && cgopt+=(--cg "$CG_CPU")
        [[ -n $CG_ACCT && $CG_ACCT != "$CG_CPU" ]] && cgopt+=(--cg "$CG_ACCT")
        note="in cgroup $CG_MODE ${CG_CPU:-(none)} with CPU quota ${QUOTA_US}/${PERIOD_US} us"
    else
        note="no quota"
    fi
    if [[ $PIN == 1 ]]; then
        CMD=(taskset -c 1 "${CMD[@]}")
    else
        note="$note, not pinned"
    fi
    { echo "# $note"; printf '%q ' "${CMD[@]}"; echo; } >"$base.cmd"
    s0=$(nginx_status); ns0=$(server_ns "$tool"); cg0=$(cg_usage_ns); th0=$(cg_throttled); st0=$(cpu1_stat)
    t0=$(date +%s.%N)
    CUR_PIDFILE=$base.rusage.pid
    # rusage.py (outside the cgroup) -> [joins the cgroup] timeout -> /usr/bin/time -> taskset -c 1 -> tool
    python3 "$BENCH_HERE/rusage.py" "$base.rusage" "${cgopt[@]}" -- \
        timeout -k 5 "$RUN_LIMIT_S" /usr/bin/time -f '%e %U %S %M' -o "$base.time" \
        "${CMD[@]}" >"$base.out" 2>"$base.err" || rc=$?
    rm -f "$CUR_PIDFILE"
    CUR_PIDFILE=
    st1=$(cpu1_stat); ns1=$(server_ns "$tool"); cg1=$(cg_usage_ns); th1=$(cg_throttled); s1=$(nginx_status)
    local req fail e u s m
    read -r req fail < <(parse_out "$tool" "$base.out" || true) || true
    # a tool whose own count leaves some requests out (gcannon's warm-up): nginx's count instead
    if counts_at_server "$tool"; then
        req=$(( ${s1#* } - ${s0#* } - 1 ))
    fi
    # elapsed/user/sys with us resolution from rusage.py (/usr/bin/time's 10 ms figures stay in $base.time);
    # peak RSS from /usr/bin/time's %M (the tool alone: rusage.py's figure would include its own pre-exec RSS)
    read -r e u s _ _ < <(tail -1 "$base.rusage" 2>/dev/null || true) || true
    read -r _ _ _ m < <(tail -1 "$base.time" 2>/dev/null || true) || true
    [[ $m =~ ^[0-9]+$ ]] || m=
    req=${req:-0} fail=${fail:-0}
    [[ $e =~ ^[0-9.]+$ ]] || { e=; u=; s=; m=; }
    python3 - "$SEQ" "$t0" "$tool" "$scen" "$round" "$req" "$e" "$u" "$s" "$m" "$cg0" "$cg1" "$th0" "$th1" \
        "$ns0" "$ns1" "$s0" "$s1" "$fail" "$rc" "$st0" "$st1" "$(cut -d' ' -f1 /proc/loadavg)" >>"$CSV" <<'EOF'
import sys
(seq, t0, tool, scen, rnd, req, e, u, s, m, cg0, cg1, th0, th1, ns0, ns1, st0, st1, fail, rc, c0, c1, la) = sys.argv[1:]
c0 = list(map(int, c0.split())); c1 = list(map(int, c1.split()))
d = [b - a for a, b in zip(c0, c1)]  # user nice system idle iowait irq softirq steal ...
tot = sum(d[:8]) or 1
steal = "%.1f" % (100.0 * d[7] / tot)
req = int(req)
f = lambda x: float(x) if x else None
e, u, s = f(e), f(u), f(s)
def per_req(x):
    return "%.3f" % (x / req * 1e6) if (x is not None and req) else ""
cg = (int(cg1) - int(cg0)) / 1e9 if cg0 and cg1 else None
thr = str(int(th1) - int(th0)) if th0 and th1 else ""
ngx = (int(ns1) - int(ns0)) / 1e9
a0, r0 = map(int, st0.split()); a1, r1 = map(int, st1.split())
cpu = u + s if u is not None else None
print(",".join(str(x) for x in [seq, "%.3f" % float(t0), tool, scen, rnd, req,
      "%.3f" % e if e is not None else "", "%.1f" % (req / e) if e else "",
      "%.4f" % u if u is not None else "", "%.4f" % s if s is not None else "",
      per_req(cpu), m or "", per_req(cg), thr, per_req(ngx), a1 - a0 - 1, r1 - r0 - 1, fail, rc, steal, la]))
EOF
    local line
    line=$(tail -1 "$CSV")
    log "$(awk -F, '{printf "%-13s %-16s r%s  %7s req  %6s s  %8s req/s  cpu %7s us/req  rss %6s KiB  failed %s rc %s", $3, $4, $5, $6, $7, $8, $11, $12, $18, $19}' <<<"$line")"
    if [[ $rc != 0 ]]; then log "  WARNING: exit $rc; see $base.err"; fi
    if [[ $fail != 0 ]]; then log "  WARNING: $fail failed or non-2xx responses; see $base.out"; fi
    sleep "$PAUSE_S"
}

# --- rounds -------------------------------------------------------------------------------
nt=${#active[@]}
for round in $(seq 1 "$ROUNDS"); do
    for scen in $SCENARIOS; do
        for i in $(seq 0 $((nt - 1))); do
            tool=${active[$(((i + round - 1) % nt))]}
            if fits "$tool" "$scen"; then run_one "$tool" "$scen" "$round"; fi
        done
    done
done

# --- memory check: herd ab -n 1000000 -c 1000 -k against the 1-byte file (no quota, no pinning, default threads) ---
if [[ $MEMCHECK == 1 && $herd_ok == 1 ]]; then
    NREQ[mem-1B-c1000]=1000000; FILE[mem-1B-c1000]=f1.html; KA[mem-1B-c1000]=1
    CONC=1000 SCALE_DIV=1
    run_one herd-default mem-1B-c1000 1 0   # herd's defaults: no quota, not pinned, one thread per core
fi

python3 "$BENCH_HERE/summarize.py" "$CSV" "$RES/versions.txt" | tee "$RES/summary.md"
log "results: $RES"
