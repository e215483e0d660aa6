#!/usr/bin/env bash
# Issue 35's io_uring floor: the epoll floor (bench/floor.c) against floor-uring (bench/floor_uring.c) and its
# variants, in rounds. Each round runs every tool in an order rotated from round to round:
#   quota: under the client CPU quota (QUOTA_PCT of one core, cgroup; pinned to CPU 1; nginx's one worker on
#          CPU 0): req/s as the tool reports it and CPU time per request (rusage.py, the whole process);
#   free:  (FREE=1) the same without a quota: CPU time per request (rusage.py);
#   perf:  in round 1 only, without a quota, 1/5 of the requests under perf stat: system calls, io_uring_enter
#          calls and context switches per request (PERF=0 or no perf: skipped). Kept apart from the CPU
#          figures because a syscall tracepoint taxes every system call while it is on (the floor's more).
# Ratios are to the floor of the same round (the machine is shared: rounds drift, ratios within one drift less).
#
# usage: bench/uring-floor.sh [PORT]
# env:   ROUNDS=5  TOOLS="floor floor-uring floor-uring-once ..."  SCENARIO=ka-6397-c100  QUOTA_PCT=25
#        PERF=1  FREE=1  SCALE_DIV=1 (divides the request count, for a quick check)
#        SUMMARIZE_ONLY=0  RES= (output directory; default bench/results/<date>-uring-floor-<scenario>)
# Output: RES/runs.csv, RES/summary.md (medians of the per-round ratios), RES/versions.txt (+ raw/).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-5}
TOOLS=${TOOLS:-floor floor-uring}
SCENARIO=${SCENARIO:-ka-6397-c100}
QUOTA_PCT=${QUOTA_PCT:-25}
PERF=${PERF:-1}
FREE=${FREE:-1}
SCALE_DIV=${SCALE_DIV:-1} WRK_S=4
RUN_LIMIT_S=${RUN_LIMIT_S:-120}
HERD=${HERD:-$ROOT/target/dist/herd}   # detect_tools probes it; no herd tool is run here
[[ " $TOOLS " == *" floor "* ]] || { echo "TOOLS must include floor (the ratios are to it)" >&2; exit 64; }
if [[ $PERF == 1 ]] && ! command -v perf >/dev/null; then
    echo "perf is not installed (apt-get install -y linux-perf): runs without the perf stat half" >&2
    PERF=0
fi

# The table of RES/summary.md from RES/runs.csv (SUMMARIZE_ONLY=1: only this, for an existing RES).
summarize() {
    python3 - "$RES/runs.csv" "$SCENARIO" "$QUOTA_PCT" <<'EOF' | tee "$RES/summary.md"
import csv, statistics, sys
path, scen, q = sys.argv[1:]
rows = [r for r in csv.DictReader(open(path)) if r["round"] != "0" and r["requests"] not in ("", "0")]
tools = list(dict.fromkeys(r["tool"] for r in rows))
def get(tool, mode, field):
    return {r["round"]: float(r[field]) for r in rows
            if r["tool"] == tool and r["mode"] == mode and r[field] not in ("",)}
def med(d):
    return statistics.median(d.values()) if d else float("nan")
def ratio(tool, mode, field, inverse=False):
    a, b = get(tool, mode, field), get("floor", mode, field)
    rs = [(b[k] / a[k] if inverse else a[k] / b[k]) for k in a if k in b and a[k] and b[k]]
    return (statistics.median(rs), min(rs), max(rs)) if rs else (float("nan"),) * 3
rounds = sorted({r["round"] for r in rows}, key=int)
la = [float(r["loadavg1"]) for r in rows]
print(f"### {scen}: floor-uring variants against the epoll floor ({len(rounds)} rounds + 1 warm-up; "
      f"load average {min(la):.2f}-{max(la):.2f})\n")
print(f"Quota {q} % of CPU 1: req/s (tool's own) and CPU µs/request (rusage); free: no quota, CPU µs/request "
      "(rusage); perf stat (round 1, no quota): system calls, io_uring_enter calls and context switches per "
      "request. x = median of the per-round ratios to the floor, as speed-ups (above 1: better than the floor; "
      "req/s: tool / floor; CPU: floor / tool), min-max in brackets.\n")
print("| tool | req/s @quota | x floor | CPU µs/req @quota | x floor (CPU) | CPU µs/req free | x floor | "
      "syscalls/req | enters/req | cswitch/req |")
print("|---|---|---|---|---|---|---|---|---|---|")
for t in tools:
    rq = ratio(t, "quota", "rps")
    cq = ratio(t, "quota", "cpu_us_per_req", inverse=True)
    cf = ratio(t, "free", "cpu_us_per_req", inverse=True)
    print(f"| {t} | {med(get(t, 'quota', 'rps')):.0f} | x{rq[0]:.3f} ({rq[1]:.2f}-{rq[2]:.2f}) | "
          f"{med(get(t, 'quota', 'cpu_us_per_req')):.2f} | x{cq[0]:.3f} ({cq[1]:.2f}-{cq[2]:.2f}) | "
          f"{med(get(t, 'free', 'cpu_us_per_req')):.2f} | x{cf[0]:.3f} ({cf[1]:.2f}-{cf[2]:.2f}) | "
          f"{med(get(t, 'perf', 'syscalls_per_req')):.3f} | {med(get(t, 'perf', 'enters_per_req')):.3f} | "
          f"{med(get(t, 'perf', 'cswitch_per_req')):.4f} |")
EOF
}
if [[ ${SUMMARIZE_ONLY:-0} == 1 ]]; then
    [[ -n ${RES:-} && -f $RES/runs.csv ]] || { echo "SUMMARIZE_ONLY needs RES= with a runs.csv" >&2; exit 64; }
    summarize
    exit 0
fi

RES=${RES:-$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-uring-floor-$SCENARIO}
mkdir -p "$RES/raw"
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM

bench_setup "${1:-}"
cg_setup $((100000 * QUOTA_PCT / 100)) 100000
[[ $CG_MODE != none ]] || { log "no CPU quota could be set (is another bench script's group in the way?)"; exit 1; }
detect_tools
read -ra want <<<"$TOOLS"
[[ ${#active[@]} == "${#want[@]}" ]] || { log "need all of: $TOOLS"; exit 1; }
{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    echo "nginx: $(nginx -v 2>&1)"
    echo "liburing: $(basename "$URING_PREFIX") at $URING_PREFIX"
    herd_versions
    echo "floor-uring: $FLOOR_URING sha256 $(sha256sum "$FLOOR_URING" | cut -d' ' -f1)"
    echo "command: ROUNDS=$ROUNDS SCALE_DIV=$SCALE_DIV PERF=$PERF FREE=$FREE QUOTA_PCT=$QUOTA_PCT SCENARIO=$SCENARIO TOOLS=\"$TOOLS\" bench/uring-floor.sh${1:+ $1}"
    echo "cgroup: $CG_MODE $CG_CPU quota $QUOTA_PCT %"
    echo "loadavg at start: $(cat /proc/loadavg)"
    echo "other nginx at start: $(pgrep -a nginx | grep -Ev "^($NGINX_PID|$NGINX_WORKER) " | tr '\n' ';' || true)"
} >"$RES/versions.txt"

csv=$RES/runs.csv
echo "round,tool,mode,requests,rps,elapsed_s,cpu_s,cpu_us_per_req,syscalls_per_req,enters_per_req,cswitch_per_req,loadavg1" >"$csv"
one() {
    local tool=$1 round=$2 mode=$3 base cgopt=() req rps e u s cpu sc en cs
    build_cmd "$tool" "$SCENARIO"
    base=$RES/raw/$round-$tool-$mode
    if [[ $mode == perf ]]; then
        local i
        for i in "${!CMD[@]}"; do   # a fifth of the requests: counts per request need no long run
            [[ ${CMD[$i]} == -n ]] && CMD[i+1]=$((CMD[i+1] / 5))
        done
    fi
    if [[ $mode == quota || $mode == free ]]; then
        [[ -n $CG_CPU && $mode == quota ]] && cgopt+=(--cg "$CG_CPU")
        printf '%q ' taskset -c 1 "${CMD[@]}" >"$base.cmd"
        python3 "$BENCH_HERE/rusage.py" "$base.rusage" "${cgopt[@]}" -- timeout -k 5 "$RUN_LIMIT_S" \
            taskset -c 1 "${CMD[@]}" >"$base.out" 2>"$base.err" || log "WARNING: $tool exit $?"
        read -r e u s _ _ <"$base.rusage"
        cpu=$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.6f", u + s}')
        sc= en= cs=
    else
        printf '%q ' perf stat taskset -c 1 "${CMD[@]}" >"$base.cmd"
        timeout -k 5 "$RUN_LIMIT_S" perf stat -x, -o "$base.perf" \
            -e task-clock,raw_syscalls:sys_enter,syscalls:sys_enter_io_uring_enter,context-switches \
            taskset -c 1 "${CMD[@]}" >"$base.out" 2>"$base.err" || log "WARNING: $tool exit $?"
        read -r cpu sc en cs < <(awk -F, '$3 == "task-clock" {tc = $1 / 1000} $3 == "raw_syscalls:sys_enter" {sc = $1}
            $3 == "syscalls:sys_enter_io_uring_enter" {en = $1} $3 == "context-switches" {cs = $1}
            END {printf "%.6f %s %s %s\n", tc, sc, en, cs}' "$base.perf")
        e=
    fi
    read -r req _ < <(parse_out "$tool" "$base.out") || req=0
    rps=$(sed -n 's/.* rps=\([0-9]*\).*/\1/p' "$base.out" | tail -1)
    awk -v r="$round" -v t="$tool" -v m="$mode" -v n="$req" -v rps="$rps" -v e="$e" -v cpu="$cpu" -v sc="$sc" \
        -v en="$en" -v cs="$cs" -v la="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
        printf "%s,%s,%s,%s,%s,%s,%s,", r, t, m, n, rps, e, cpu
        if (n > 0) printf "%.3f,", cpu * 1e6 / n; else printf ","
        if (n > 0 && sc != "") printf "%.3f,%.3f,%.4f,", sc / n, en / n, cs / n; else printf ",,,"
        print la }' >>"$csv"
    log "round $round $tool $mode: $(tail -1 "$csv")"
    sleep 1
}
read -ra tools <<<"$TOOLS"
nt=${#tools[@]}
for round in $(seq 0 "$ROUNDS"); do   # round 0 is the warm-up
    for k in $(seq 0 $((nt - 1))); do
        t=${tools[$(((k + round) % nt))]}
        one "$t" "$round" quota
        [[ $FREE == 1 ]] && one "$t" "$round" free
        [[ $PERF == 1 && $round == 1 ]] && one "$t" "$round" perf
    done
done
echo "loadavg at end: $(cat /proc/loadavg)" >>"$RES/versions.txt"

summarize
log "results: $RES"
