#!/usr/bin/env bash
# Before/after rounds of two herd binaries WITHOUT a CPU quota, under perf stat: task-clock per request
# and the syscalls behind it (all of them, and epoll_wait alone). The cross-check of bench/pairs.sh: the
# quota's throttling adds its own noise, and CPU time alone cannot say whether a change added syscalls
# (kernel time dominates a client's cost here) or user-space work (see bench/instructions.sh).
# Same set-up as run.sh: nginx on CPU 0, the client pinned to CPU 1. Each round runs both, alternating
# which goes first.
#
# usage: bench/perfstat-pairs.sh [PORT]
# env:   ROUNDS=12  SCENARIO=ka-6397-c100  HERD=target/dist/herd  HERD_BASE= (the "before" binary)
# Output: bench/results/<date>-perfstat-<scenario>/perfstat.md and perfstat.csv (+ raw/).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-12}
SCENARIO=${SCENARIO:-ka-6397-c100}
HERD=${HERD:-$ROOT/target/dist/herd}
SCALE_DIV=1
TOOLS="herd-base herd"
RUN_LIMIT_S=${RUN_LIMIT_S:-120}
command -v perf >/dev/null || { echo "perf is not installed (apt-get install -y linux-perf)" >&2; exit 1; }

RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-perfstat-$SCENARIO
mkdir -p "$RES/raw"
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM

bench_setup "${1:-}"
detect_tools
[[ ${#active[@]} == 2 ]] || { log "need both herd (HERD) and herd-base (HERD_BASE)"; exit 1; }
{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    echo "nginx: $(nginx -v 2>&1)"
    echo "perf: $(perf --version)"
    herd_versions "herd=$HERD" "herd-base=$HERD_BASE"
    echo "command: ROUNDS=$ROUNDS SCENARIO=$SCENARIO bench/perfstat-pairs.sh${1:+ $1}"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/versions.txt"

csv=$RES/perfstat.csv
echo "round,tool,requests,task_clock_ms,syscalls,epoll_waits,context_switches" >"$csv"
one() {
    local tool=$1 round=$2 base req
    build_cmd "$tool" "$SCENARIO"
    base=$RES/raw/$round-$tool
    printf '%q ' "${CMD[@]}" >"$base.cmd"
    timeout -k 5 "$RUN_LIMIT_S" perf stat -x, -o "$base.perf" \
        -e task-clock,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,context-switches \
        taskset -c 1 "${CMD[@]}" >"$base.out" 2>"$base.err" || log "WARNING: $tool exit $?"
    read -r req _ < <(parse_out "$tool" "$base.out") || req=0
    awk -F, -v r="$round" -v t="$tool" -v n="$req" '
        $3 == "task-clock" {tc = $1} $3 == "raw_syscalls:sys_enter" {sc = $1}
        $3 == "syscalls:sys_enter_epoll_wait" {ew = $1} $3 == "context-switches" {cs = $1}
        END {print r "," t "," n "," tc "," sc "," ew "," cs}' "$base.perf" >>"$csv"
    log "round $round $tool: $(tail -1 "$csv")"
}
for round in $(seq 0 "$ROUNDS"); do   # round 0 is the warm-up
    if (( round % 2 )); then one herd "$round"; one herd-base "$round"; else one herd-base "$round"; one herd "$round"; fi
done

python3 - "$csv" "$SCENARIO" <<'EOF' | tee "$RES/perfstat.md"
import csv, statistics, sys
path, scen = sys.argv[1:]
rows = [r for r in csv.DictReader(open(path)) if r["round"] != "0" and int(r["requests"] or 0) > 0]
print(f"### perf stat, {scen}, no quota, client on CPU 1: herd against herd-base "
      f"({len({r['round'] for r in rows})} rounds + 1 warm-up)\n")
print("| tool | task-clock µs/req: median (min-max) | syscalls/req | epoll_wait/req | context switches |")
print("|---|---|---|---|---|")
for t in ["herd-base", "herd"]:
    r = [x for x in rows if x["tool"] == t]
    per = lambda k: [float(x[k]) / int(x["requests"]) for x in r]
    tc = [v * 1000 for v in per("task_clock_ms")]
    print(f"| {t} | {statistics.median(tc):.3f} ({min(tc):.3f}-{max(tc):.3f}) | "
          f"{statistics.median(per('syscalls')):.3f} | {statistics.median(per('epoll_waits')):.4f} | "
          f"{statistics.median(int(x['context_switches']) for x in r):,.0f} |")
by = {}
for x in rows:
    by.setdefault(x["round"], {})[x["tool"]] = float(x["task_clock_ms"]) / int(x["requests"])
ratios = [p["herd"] / p["herd-base"] for p in by.values() if len(p) == 2]
print(f"\nper round, task-clock herd/herd-base: median **x{statistics.median(ratios):.3f}** "
      f"(min x{min(ratios):.3f}, max x{max(ratios):.3f})")
EOF
log "results: $RES"
