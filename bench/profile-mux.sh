#!/usr/bin/env bash
# Where do the multiplexing clients' CPU go (issue 19)? For each tool, against the same servers as run.sh
# (nginx or caddy on CPU 0, the client pinned to CPU 1, NO quota): perf stat (task-clock, context
# switches, syscalls) per request, then perf record -e cpu-clock (software event: this VM has no hardware
# counters) by shared object and by symbol.
#
# usage: bench/profile-mux.sh [PORT]
# env:   TOOLS="herd-h2c h2load-h2c herd-h2 h2load-h2"  SCENARIO=mux-6397-c10-m10  SCALE_DIV=1
#        HERD=target/dist/herd  (herd-h3 / oha-h3 start caddy, as run.sh does)
#        HERD_BASE=/tmp/herd-base-…  for herd-h2c-base / herd-h3-base: a frozen "before" build, same run
# Output: bench/results/<date>-profile-mux-<scenario>/profile.md, versions.txt (+ raw/).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

TOOLS=${TOOLS:-herd-h2c h2load-h2c herd-h2 h2load-h2}
SCENARIO=${SCENARIO:-mux-6397-c10-m10}
SCALE_DIV=${SCALE_DIV:-1}
HERD=${HERD:-$ROOT/target/dist/herd}
RUN_LIMIT_S=${RUN_LIMIT_S:-120}
command -v perf >/dev/null || { echo "perf is not installed (package linux-perf)" >&2; exit 1; }

RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-profile-mux-$SCENARIO
mkdir -p "$RES/raw"
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM

bench_setup "${1:-}"
if [[ " $TOOLS " == *-h3\ * ]]; then caddy_setup; fi
detect_tools
{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    echo "perf: $(perf --version)"
    if [[ " $TOOLS " == *-base\ * ]]; then herd_versions "herd=$HERD" "herd-base=${HERD_BASE:-}"; else herd_versions "herd=$HERD"; fi
    echo "command: TOOLS=\"$TOOLS\" SCENARIO=$SCENARIO SCALE_DIV=$SCALE_DIV bench/profile-mux.sh${1:+ $1}"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/versions.txt"

{
    echo "## Profile of $SCENARIO (client pinned to CPU 1, no quota), $(date -Is)"
    echo
    grep -E '^(herd|loadavg)' "$RES/versions.txt" | sed 's/$/  /'
    echo
    echo "### perf stat, per request"
    echo
    echo "| tool | requests | task-clock µs/req | context switches/req | syscalls/req |"
    echo "|---|---|---|---|---|"
} >"$RES/profile.md"

for tool in "${active[@]}"; do
    build_cmd "$tool" "$SCENARIO"
    base=$RES/raw/$tool
    printf '%q ' taskset -c 1 "${CMD[@]}" >"$base.cmd"
    timeout -k 5 "$RUN_LIMIT_S" perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -o "$base.stat" \
        -- taskset -c 1 "${CMD[@]}" >"$base.stat.out" 2>"$base.stat.err" || log "WARNING: perf stat $tool exit $?"
    read -r req _ < <(parse_out "$tool" "$base.stat.out") || req=0
    python3 - "$base.stat" "$tool" "$req" >>"$RES/profile.md" <<'EOF'
import sys
path, tool, req = sys.argv[1], sys.argv[2], int(sys.argv[3])
v = {}
for line in open(path):
    f = line.strip().split(",")
    if len(f) > 2 and f[0] and not line.startswith("#"):
        try:
            v[f[2]] = float(f[0])
        except ValueError:
            pass
def per(k, scale=1.0):
    return f"{v[k] * scale / req:.2f}" if k in v and req else "-"
# task-clock is in ms
print(f"| {tool} | {req} | {per('task-clock', 1000.0)} | {per('context-switches')} | {per('raw_syscalls:sys_enter')} |")
EOF
    timeout -k 5 "$RUN_LIMIT_S" perf record -q -e cpu-clock -F 20000 -o "$base.data" -- taskset -c 1 "${CMD[@]}" \
        >"$base.out" 2>"$base.err" || log "WARNING: perf record $tool exit $?"
    perf report -i "$base.data" --no-children --sort dso -q 2>/dev/null | awk 'NF' >"$base.dso" || true
    perf report -i "$base.data" --no-children --sort dso,sym -q 2>/dev/null | awk 'NF && n++ < 60' >"$base.sym" || true
    rm -f "$base.data"
    log "$tool done"
done

for tool in "${active[@]}"; do
    {
        echo
        echo "### $tool: perf record -e cpu-clock, share of samples by shared object, then the top symbols"
        echo
        echo '```'
        head -12 "$RES/raw/$tool.dso"
        echo
        head -40 "$RES/raw/$tool.sym"
        echo '```'
    } >>"$RES/profile.md"
done
cat "$RES/profile.md"
log "results: $RES"
