#!/usr/bin/env bash
# Issue 35 point 5: "10,000 idle keep-alive connections: RSS <= 16 MiB". herd run's resident
# memory while it holds CONNS keep-alive connections that are nearly idle, measured the same way
# for each backend (IO=epoll today, IO=uring once its HTTP/1 worker lands), so that the figure
# says what the backend's per-connection state costs (buffer rings sized to the load, not to
# the connections).
#
# usage: bench/idle-rss.sh [PORT]   (PORT: a free port for nginx; default: first free of
#                                   18080-18179)
# env:   IO=epoll         herd run --io IO (epoll | uring | auto); a backend herd refuses here
#                         stops the script with herd's own reason (today: uring, not yet for
#                         HTTP/1)
#        CONNS=10000      connections of the measured run
#        BASE_CONNS=1000  connections of a second, smaller run (0: none): the difference in RSS
#                         over the difference in connections is the bytes per connection
#        THINK=10s        herd run --think: each connection's pause between its requests, so
#                         the load is CONNS / THINK requests/s (1,000/s at the defaults) and
#                         each connection is idle nearly all the time
#        DURATION=30      seconds per run (herd run -d); at least two pauses and 2 s, so that
#                         every connection has been reused before the end
#        THREADS=1        herd run -t: one event loop, so that the figure does not depend on
#                         the core count (each worker adds its own fixed part, ~1.1 MiB)
#        HERD=path        the herd binary (default: target/dist/herd)
#
# The load: a closed loop (`herd run -c CONNS --think THINK`) of keep-alive GETs of the 1-byte
# file. herd opens every connection at the start, each sends one request, then waits THINK
# before its next: the connections stay open and idle but for a 1-byte response every THINK.
# (An open loop at a low --rate would not do: it reuses the connection that has waited longest
# and opens a new one only when all are busy, so it never holds 10,000 at a low rate.)
# The server: nginx as bench/lib.sh starts it (one worker on CPU 0, keepalive_timeout 75 s,
# longer than THINK), with worker_connections and its open-file limit raised for CONNS
# (NGINX_WCONN, NGINX_RLIMIT; the machine's hard limit of 20,000 open files per process holds
# both sides).
# Memory: /proc/PID/status of herd's process every SAMPLE_S (0.2 s): VmRSS (resident now), VmHWM
# (the peak so far), RssAnon, and the connections open (ss: established to the port). Figures:
#   steady RSS   the largest VmRSS once all CONNS connections are open and each has had THINK
#                to go idle (from THINK + 2 s after the last one opened to the end): the
#                issue's figure;
#   peak RSS     VmHWM at the last sample (start-up included: every request at once at the
#                start), and /usr/bin/time's maximum resident set as a cross-check.
# Output: bench/results/<date>-idle-rss/ (versions.txt with the command, summary.md with the
# figures, raw/: each run's herd command, output, JSON and samples.csv). Everything started
# here (nginx, herd) is stopped by its own PID; loopback only.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

IO=${IO:-epoll}
CONNS=${CONNS:-10000}
BASE_CONNS=${BASE_CONNS:-1000}
THINK=${THINK:-10s}
DURATION=${DURATION:-30}
THREADS=${THREADS:-1}
SAMPLE_S=${SAMPLE_S:-0.2}
HERD=${HERD:-$ROOT/target/dist/herd}
NOFILE_CAP=20000   # this machine's hard limit per process; nginx and herd each stay under it

case $IO in
    epoll | uring | auto) ;;
    *) echo "IO must be epoll, uring or auto, not $IO" >&2; exit 64 ;;
esac
[[ $CONNS =~ ^[0-9]+$ && $BASE_CONNS =~ ^[0-9]+$ && $CONNS -gt 0 && $BASE_CONNS -lt $CONNS ]] ||
    { echo "CONNS must be a positive count above BASE_CONNS ($CONNS, $BASE_CONNS)" >&2; exit 64; }
[[ $THINK =~ ^([0-9]+)s$ ]] ||
    { echo "THINK must be whole seconds, as 10s (not $THINK)" >&2; exit 64; }
THINK_S=${BASH_REMATCH[1]}
[[ $DURATION =~ ^[0-9]+$ && $DURATION -ge $((2 * THINK_S + 2)) ]] ||
    { echo "DURATION ($DURATION s) must cover two pauses of $THINK and 2 s" >&2; exit 64; }

# nginx: a connection slot per client connection, and 1/8 more: nginx starts closing idle
# keep-alive connections ("worker_connections are not enough, reusing connections") once fewer
# than 1/16 of its slots are free. Its files: each connection and the files it serves. Both under
# the machine's cap.
NGINX_WCONN=${NGINX_WCONN:-$((CONNS + CONNS / 8 + 512))}
NGINX_RLIMIT=${NGINX_RLIMIT:-$((NGINX_WCONN + 512))}
NGINX_BACKLOG=${NGINX_BACKLOG:-4096}
(( NGINX_RLIMIT < NOFILE_CAP )) ||
    { echo "CONNS=$CONNS: nginx would need $NGINX_RLIMIT files (cap $NOFILE_CAP)" >&2; exit 64; }
[[ -x $HERD ]] ||
    { echo "no herd binary at $HERD (cargo build --profile dist -p herd, or HERD=)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "GNU time is missing (apt-get install -y time)" >&2; exit 1; }
command -v ss >/dev/null || { echo "ss is missing (apt-get install -y iproute2)" >&2; exit 1; }

ulimit -n "$(ulimit -Hn)"
(( $(ulimit -n) > CONNS + 64 )) ||
    { echo "open-file limit $(ulimit -n) is too low for CONNS=$CONNS" >&2; exit 1; }

STAMP=$(date +%Y-%m-%d-%H%M%S)
RES=${RES:-$BENCH_HERE/results/$STAMP-idle-rss}
mkdir -p "$RES/raw"

HERD_PID=
TIME_PID=
cleanup() {
    local rc=$?
    if [[ -n $TIME_PID ]] && kill -0 "$TIME_PID" 2>/dev/null; then
        # herd first (its own PID, a child of GNU time), then time itself if it lingers
        if [[ -n $HERD_PID ]] && kill -0 "$HERD_PID" 2>/dev/null; then
            kill -TERM "$HERD_PID" 2>/dev/null || true
        fi
        sleep 1
        kill -0 "$TIME_PID" 2>/dev/null && kill -TERM "$TIME_PID" 2>/dev/null
    fi
    if [[ -n $BENCH && -f $BENCH/error.log ]]; then
        cp "$BENCH/error.log" "$RES/nginx-error.log" 2>/dev/null || true
    fi
    bench_cleanup
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export NGINX_WCONN NGINX_RLIMIT NGINX_BACKLOG
bench_setup "${1:-}"
URL=http://127.0.0.1:$PORT/f1.html

# The backend first, with one request: herd refuses a backend it cannot run before it sends
# anything.
if ! pre=$("$HERD" run --io "$IO" -n 1 -c 1 "$URL" 2>&1); then
    log "herd run --io $IO cannot run here; stopping (nothing measured):"
    printf '%s\n' "$pre" | sed 's/^/    /' >&2
    rm -rf "$RES"
    exit 1
fi
IO_LINE=$(grep -m1 -E '^ *I/O' <<<"$pre" | tr -s ' ' | sed 's/^ //' || true)
log "herd run --io $IO: ${IO_LINE:-no I/O line in the summary}"

{
    echo "date: $(date -Is)"
    echo "nproc: $(nproc)"
    echo "cpu: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
    echo "kernel: $(uname -srvm)"
    echo "debian: $(cat /etc/debian_version)"
    echo "nginx: $(nginx -v 2>&1) (worker_connections $NGINX_WCONN," \
        "worker_rlimit_nofile $NGINX_RLIMIT)"
    herd_versions "herd=$HERD"
    echo "herd I/O: ${IO_LINE:-?}"
    echo "command: IO=$IO CONNS=$CONNS BASE_CONNS=$BASE_CONNS THINK=$THINK DURATION=$DURATION" \
        "THREADS=$THREADS bench/idle-rss.sh${1:+ $1}"
    echo "GNU time: $(/usr/bin/time --version 2>&1 | head -1)"
    echo "ulimit -n: $(ulimit -n)"
    echo "page size: $(getconf PAGESIZE)"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/versions.txt"

# kB of field $2 in /proc/$1/status (empty once the process is gone).
status_kb() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status" 2>/dev/null || true; }

# run_one C: herd run with C connections under GNU time, sampled until it ends. Prints
# "STEADY_KB HWM_KB TIME_KB OPENED_AT_S MAX_OPEN ANON_KB" (STEADY_KB "-": the steady window was
# never reached). Called in this shell, its output to a file, not in a subshell: cleanup must
# see HERD_PID.
run_one() {
    local c=$1 base=$RES/raw/c$1 t0 now el rss hwm anon open i
    local cmd=("$HERD" run --io "$IO" -t "$THREADS" -c "$c" --think "$THINK" -d "${DURATION}s"
        --json "$base.json" "$URL")
    printf '%q ' "${cmd[@]}" >"$base.cmd"; echo >>"$base.cmd"
    echo "t_s,vmrss_kb,vmhwm_kb,rssanon_kb,open_connections" >"$base.samples.csv"
    t0=$(date +%s.%N)
    /usr/bin/time -f '%M %e %U %S' -o "$base.time" "${cmd[@]}" >"$base.out" 2>"$base.err" &
    TIME_PID=$!
    HERD_PID=
    for i in $(seq 100); do
        HERD_PID=$(awk '{print $1}' "/proc/$TIME_PID/task/$TIME_PID/children" 2>/dev/null || true)
        [[ -n $HERD_PID ]] && break
        sleep 0.05
    done
    [[ -n $HERD_PID ]] || { log "herd's process under GNU time ($TIME_PID) not found"; return 1; }
    while kill -0 "$HERD_PID" 2>/dev/null; do
        rss=$(status_kb "$HERD_PID" VmRSS) hwm=$(status_kb "$HERD_PID" VmHWM)
        anon=$(status_kb "$HERD_PID" RssAnon)
        [[ -n $rss && -n $hwm && -n $anon ]] || break   # it is exiting
        open=$(ss -Htn state established "( dport = :$PORT )" 2>/dev/null | wc -l)
        now=$(date +%s.%N)
        el=$(awk -v a="$t0" -v b="$now" 'BEGIN {printf "%.2f", b - a}')
        echo "$el,$rss,$hwm,$anon,$open" >>"$base.samples.csv"
        sleep "$SAMPLE_S"
    done
    local rc=0
    wait "$TIME_PID" || rc=$?
    TIME_PID= HERD_PID=
    if [[ $rc != 0 ]]; then
        log "herd run -c $c exited $rc: $(tail -3 "$base.err" | tr '\n' ' ')"
        return 1
    fi
    python3 - "$base.samples.csv" "$c" "$THINK_S" "$base.time" <<'EOF'
import csv, sys
path, conns, think, tpath = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(path))]
opened = next((r["t_s"] for r in rows if r["open_connections"] >= conns), None)
steady = [r for r in rows if opened is not None and r["t_s"] >= opened + think + 2
          and r["open_connections"] >= conns]
time_kb = open(tpath).read().split()[0]
print(int(max(r["vmrss_kb"] for r in steady)) if steady else "-",
      int(rows[-1]["vmhwm_kb"]) if rows else "-", time_kb,
      "%.1f" % opened if opened is not None else "-",
      int(max(r["open_connections"] for r in rows)) if rows else 0,
      int(max(r["rssanon_kb"] for r in steady)) if steady else "-")
EOF
}

declare -A STEADY HWM TKB OPENED MAXOPEN ANON
for c in $CONNS $([[ $BASE_CONNS -gt 0 ]] && echo "$BASE_CONNS" || true); do
    log "herd run --io $IO -t $THREADS -c $c --think $THINK -d ${DURATION}s" \
        "(sampling every ${SAMPLE_S} s)"
    run_one "$c" >"$RES/raw/c$c.figures" ||
        { log "the run with $c connections failed; see $RES/raw/c$c.err"; exit 1; }
    read -r STEADY[$c] HWM[$c] TKB[$c] OPENED[$c] MAXOPEN[$c] ANON[$c] <"$RES/raw/c$c.figures"
    [[ ${STEADY[$c]} != - ]] || {
        log "the run with $c connections never held them all for $THINK" \
            "(at most ${MAXOPEN[$c]} open); see $RES/raw"
        exit 1
    }
    log "  -c $c: all open at ${OPENED[$c]} s; steady RSS ${STEADY[$c]} KiB" \
        "(anonymous ${ANON[$c]}), peak (VmHWM) ${HWM[$c]} KiB, GNU time ${TKB[$c]} KiB"
    grep -E 'requests in|completed|I/O' "$RES/raw/c$c.out" | head -3 | sed 's/^/    /' >&2 || true
done

# The figures of both runs, "C STEADY_KB ANON_KB HWM_KB TIME_KB" each, to the summary.
figures() { echo "$1 ${STEADY[$1]} ${ANON[$1]} ${HWM[$1]} ${TKB[$1]}"; }
runs=("$(figures "$CONNS")")
[[ -n ${STEADY[$BASE_CONNS]:-} ]] && runs+=("$(figures "$BASE_CONNS")")
python3 - "$IO" "$THINK" "$THREADS" "${runs[@]}" <<'EOF' | tee "$RES/summary.md"
import sys
io, think, threads = sys.argv[1:4]
runs = [list(map(int, a.split())) for a in sys.argv[4:]]
mib = lambda kb: kb / 1024
conns, steady, anon = runs[0][:3]
print(f"# herd run, {conns:,} idle keep-alive connections "
      f"(--io {io}, -t {threads}, --think {think})\n")
print("| connections | steady RSS | of it anonymous | peak RSS (VmHWM) | GNU time max RSS |")
print("|---|---|---|---|---|")
for c, st, an, hw, tk in runs:
    print(f"| {c:,} | {mib(st):.1f} MiB | {mib(an):.1f} MiB | {mib(hw):.1f} MiB "
          f"| {mib(tk):.1f} MiB |")
print()
if conns == 10000:
    verdict = "within" if steady <= 16 * 1024 else "OVER"
    print(f"Issue 35's bound, 16 MiB at 10,000 connections: steady RSS {mib(steady):.1f} MiB, "
          f"{verdict}.")
if len(runs) == 2:
    base, bsteady, banon = runs[1][:3]
    per = (steady - bsteady) * 1024 / (conns - base)
    per_anon = (anon - banon) * 1024 / (conns - base)
    print(f"Bytes per connection ({base:,} to {conns:,} connections): {per:,.0f} by RSS, "
          f"{per_anon:,.0f} by anonymous memory (the program's own; the file-backed rest is "
          f"herd's code and moves with page reclaim); fixed part: "
          f"{mib(steady - per * conns / 1024):.1f} MiB.")
EOF
log "results: $RES"
