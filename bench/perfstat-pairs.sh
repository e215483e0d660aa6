#!/usr/bin/env bash
# Before/after rounds of two herd binaries WITHOUT a CPU quota, under perf stat: task-clock per request
# and the syscalls behind it (all of them, and epoll_wait alone). The cross-check of bench/pairs.sh: the
# quota's throttling adds its own noise, and CPU time alone cannot say whether a change added syscalls
# (kernel time dominates a client's cost here) or user-space work (see bench/instructions.sh).
# Same set-up as run.sh: nginx on CPU 0, the client pinned to CPU 1. Each round runs every tool,
# the order rotated by one each round (two tools: alternating which goes first).
# TOOLS may name other clients too (issue 35: TOOLS="floor herd-run gcannon", no quota); a tool
# whose own count leaves some requests out (gcannon: counts_at_server) is counted at nginx.
#
# usage: bench/perfstat-pairs.sh [PORT]
# env:   ROUNDS=12  SCENARIO=ka-6397-c100  HERD=target/dist/herd  HERD_BASE= (the "before" binary)
#        TOOLS="herd-base herd" (a pipelined SCENARIO, e.g. ka-6397-c100-p16:
#        "herd-run-base-p16 herd-run-p16")
#        WRK_S=4 (gcannon's seconds)
# Output: bench/results/<date>-perfstat-<scenario>/perfstat.md and perfstat.csv (+ raw/).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-12}
SCENARIO=${SCENARIO:-ka-6397-c100}
HERD=${HERD:-$ROOT/target/dist/herd}
SCALE_DIV=1 WRK_S=${WRK_S:-4}
[[ -n ${NREQ[$SCENARIO]:-} ]] || { echo "unknown scenario $SCENARIO" >&2; exit 64; }
if [[ -n ${DEPTH[$SCENARIO]:-} ]]; then
    TOOLS=${TOOLS:-herd-run-base-p${DEPTH[$SCENARIO]} herd-run-p${DEPTH[$SCENARIO]}}
else
    TOOLS=${TOOLS:-herd-base herd}
fi
for t in $TOOLS; do
    fits "$t" "$SCENARIO" ||
        { echo "tool $t does not run scenario $SCENARIO (see fits in bench/lib.sh)" >&2; exit 64; }
done
RUN_LIMIT_S=${RUN_LIMIT_S:-120}
command -v perf >/dev/null || { echo "perf is not installed (apt-get install -y linux-perf)" >&2; exit 1; }

RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-perfstat-$SCENARIO
mkdir -p "$RES/raw"
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM

bench_setup "${1:-}"
detect_tools
read -ra want <<<"$TOOLS"
[[ ${#active[@]} == "${#want[@]}" ]] ||
    { log "need all of: $TOOLS (herd: HERD, herd-base: HERD_BASE)"; exit 1; }
{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    echo "nginx: $(nginx -v 2>&1)"
    echo "perf: $(perf --version)"
    herd_versions "herd=$HERD" ${HERD_BASE:+"herd-base=$HERD_BASE"}
    [[ " $TOOLS " == *" gcannon"* ]] && gcannon_version
    echo "command: ROUNDS=$ROUNDS SCENARIO=$SCENARIO TOOLS=\"$TOOLS\" bench/perfstat-pairs.sh${1:+ $1}"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/versions.txt"

csv=$RES/perfstat.csv
# requests: the tool's own count, or nginx's (counts_at_server); tool_requests: the tool's own
echo "round,tool,requests,task_clock_ms,syscalls,epoll_waits,context_switches,tool_requests,failed,"\
"loadavg1" >"$csv"
one() {
    local tool=$1 round=$2 base req treq fail n0 n1
    build_cmd "$tool" "$SCENARIO"
    base=$RES/raw/$round-$tool
    printf '%q ' "${CMD[@]}" >"$base.cmd"
    n0=$(nginx_requests || echo)
    timeout -k 5 "$RUN_LIMIT_S" perf stat -x, -o "$base.perf" \
        -e task-clock,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,context-switches \
        taskset -c 1 "${CMD[@]}" >"$base.out" 2>"$base.err" || log "WARNING: $tool exit $?"
    n1=$(nginx_requests || echo)
    read -r req treq fail < <(run_requests "$tool" "$base.out" "$n0" "$n1")
    awk -F, -v r="$round" -v t="$tool" -v n="$req" -v tr="$treq" -v f="$fail" \
        -v la="$(cut -d' ' -f1 /proc/loadavg)" '
        $3 == "task-clock" {tc = $1} $3 == "raw_syscalls:sys_enter" {sc = $1}
        $3 == "syscalls:sys_enter_epoll_wait" {ew = $1} $3 == "context-switches" {cs = $1}
        END {print r "," t "," n "," tc "," sc "," ew "," cs "," tr "," f "," la}' "$base.perf" >>"$csv"
    log "round $round $tool: $(tail -1 "$csv")"
    [[ ${fail:-0} == 0 ]] || log "WARNING: $tool: $fail failed (see $base.out)"
}
nt=${#want[@]}
for round in $(seq 0 "$ROUNDS"); do   # round 0 is the warm-up
    for i in $(seq 0 $((nt - 1))); do one "${want[$(((i + round) % nt))]}" "$round"; done
done

python3 - "$csv" "$SCENARIO" "${want[@]}" <<'EOF' | tee "$RES/perfstat.md"
import csv, statistics, sys
path, scen, *tools = sys.argv[1:]
rows = [r for r in csv.DictReader(open(path)) if r["round"] != "0" and int(r["requests"] or 0) > 0]
print(f"### perf stat, {scen}, no quota, client on CPU 1: {', '.join(tools)} "
      f"({len({r['round'] for r in rows})} rounds + 1 warm-up; load average "
      f"{min(float(r['loadavg1']) for r in rows):.2f}-{max(float(r['loadavg1']) for r in rows):.2f})\n")
print("| tool | task-clock µs/req: median (min-max) | syscalls/req | epoll_wait/req | context switches |")
print("|---|---|---|---|---|")
for t in tools:
    r = [x for x in rows if x["tool"] == t]
    if not r:
        print(f"| {t} | n/a | n/a | n/a | n/a |")
        continue
    per = lambda k: [float(x[k]) / int(x["requests"]) for x in r]
    tc = [v * 1000 for v in per("task_clock_ms")]
    print(f"| {t} | {statistics.median(tc):.3f} ({min(tc):.3f}-{max(tc):.3f}) | "
          f"{statistics.median(per('syscalls')):.3f} | {statistics.median(per('epoll_waits')):.4f} | "
          f"{statistics.median(int(x['context_switches']) for x in r):,.0f} |")
by = {}
for x in rows:
    by.setdefault(x["round"], {})[x["tool"]] = float(x["task_clock_ms"]) / int(x["requests"])
print()
for t in tools[1:]:
    ratios = [p[t] / p[tools[0]] for p in by.values() if t in p and tools[0] in p]
    if ratios:
        print(f"per round, task-clock {t}/{tools[0]}: median **x{statistics.median(ratios):.3f}** "
              f"(min x{min(ratios):.3f}, max x{max(ratios):.3f})  ")
EOF
log "results: $RES"
