#!/usr/bin/env bash
# Where does a client's CPU go? Syscalls, context switches and CPU per request for each client, against
# the same nginx set-up as run.sh (nginx pinned to CPU 0, client pinned to CPU 1 (herd-default: not
# pinned), NO quota, as in
# baseline.md section 7a), with perf stat (task-clock, context-switches, raw_syscalls:sys_enter),
# then a per-syscall breakdown from strace -f -c on shorter runs (strace slows the client a lot; its
# counts per request are what matters, not its times).
#
# usage: bench/profile.sh [PORT]
# env:   TOOLS="floor herd herd-default wrk ab h2load"  SCENARIOS="ka-6397-c100 ka-1MiB-c100 close-6397-c100"
#        SCALE_DIV=1 (divide request counts)  WRK_S=2  STRACE=0 (skip strace)  REPEAT=2 (perf runs per tool)
#        MEMSCALE=0 (skip the peak-RSS-against-run-length section: herd ab -k at -n 100k/1M/2M, ~1 min)
#        PERFSTAT=0 (skip the perf stat section)  PERFREC=0 (skip the perf record section: where the floor's
#        and herd's CPU goes, by shared object and by symbol, sampled with the cpu-clock software event)
# Output: bench/results/<date>-profile/profile.md, versions.txt (+ raw/).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

HERD=${HERD:-$ROOT/target/dist/herd}
TOOLS=${TOOLS:-floor herd herd-default wrk ab h2load}
SCENARIOS=${SCENARIOS:-ka-6397-c100 ka-1MiB-c100 close-6397-c100}
SCALE_DIV=${SCALE_DIV:-1}
WRK_S=${WRK_S:-2}
STRACE=${STRACE:-1}
MEMSCALE=${MEMSCALE:-1}
PERFSTAT=${PERFSTAT:-1}
PERFREC=${PERFREC:-1}
REPEAT=${REPEAT:-2}
RUN_LIMIT_S=${RUN_LIMIT_S:-120}
command -v perf >/dev/null || { echo "perf is not installed (apt-get install -y linux-perf)" >&2; exit 1; }

RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-profile
mkdir -p "$RES/raw"
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM
ulimit -n "$(ulimit -Hn)"

bench_setup "${1:-}"
detect_tools
log "profiling: ${active[*]}; scenarios: $SCENARIOS"
{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    echo "nginx: $(nginx -v 2>&1)"
    echo "perf: $(perf --version)"
    herd_versions "herd=$HERD"
    echo "command: TOOLS=\"$TOOLS\" SCENARIOS=\"$SCENARIOS\" SCALE_DIV=$SCALE_DIV REPEAT=$REPEAT STRACE=$STRACE MEMSCALE=$MEMSCALE PERFSTAT=$PERFSTAT PERFREC=$PERFREC bench/profile.sh${1:+ $1}"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/versions.txt"

out_md=$RES/profile.md
: >"$out_md"
[[ $PERFSTAT == 1 ]] && {
    echo "### perf stat per request (client pinned to CPU 1 except herd-default, no quota; $REPEAT runs each, shown a / b)"
    echo
    echo "| scenario | tool | requests | CPU µs/req (task-clock) | syscalls/req | context switches/req |"
    echo "|---|---|---|---|---|---|"
} >>"$out_md"

[[ $PERFSTAT == 1 ]] && for scen in $SCENARIOS; do
    for tool in "${active[@]}"; do
        cpu=() sys=() cs=() reqs=()
        for rep in $(seq "$REPEAT"); do
            build_cmd "$tool" "$scen"
            [[ $PIN == 1 ]] && CMD=(taskset -c 1 "${CMD[@]}")
            base=$RES/raw/$scen-$tool-perf$rep
            printf '%q ' perf stat -x, -o "$base.perf" -e task-clock,context-switches,raw_syscalls:sys_enter -- \
                "${CMD[@]}" >"$base.cmd"
            timeout -k 5 "$RUN_LIMIT_S" perf stat -x, -o "$base.perf" -e task-clock,context-switches,raw_syscalls:sys_enter -- \
                "${CMD[@]}" >"$base.out" 2>"$base.err" || log "WARNING: $tool exit $?"
            read -r req _ < <(parse_out "$tool" "$base.out") || req=0
            line=$(awk -F, -v r="$req" '
                $3 == "task-clock" {t = $1}
                $3 == "context-switches" {c = $1}
                $3 == "raw_syscalls:sys_enter" {s = $1}
                END { if (r > 0) printf "%.2f %.2f %.3f", t * 1000 / r, s / r, c / r }' "$base.perf")
            read -r a b c <<<"$line"
            cpu+=("$a"); sys+=("$b"); cs+=("$c"); reqs+=("$req")
            log "perf $scen $tool: $req requests, $a us/req, $b syscalls/req, $c cs/req"
            sleep 1
        done
        (IFS=/; echo "| $scen | $tool | ${reqs[*]} | ${cpu[*]} | ${sys[*]} | ${cs[*]} |") | sed 's|/| / |g' >>"$out_md"
    done
done

if [[ $STRACE == 1 ]] && command -v strace >/dev/null; then
    {
        echo
        echo "### strace -f -c: syscalls per request (shorter runs: 1/10 of the requests, wrk 1 s)"
        echo
    } >>"$out_md"
    SCALE_DIV=$((SCALE_DIV * 10)) WRK_S=1
    for scen in $SCENARIOS; do
        for tool in "${active[@]}"; do
            build_cmd "$tool" "$scen"
            [[ $PIN == 1 ]] && CMD=(taskset -c 1 "${CMD[@]}")
            base=$RES/raw/$scen-$tool-strace
            timeout -k 5 "$RUN_LIMIT_S" strace -f -c -o "$base.strace" "${CMD[@]}" >"$base.out" 2>"$base.err" ||
                log "WARNING: strace $tool exit $?"
            read -r req _ < <(parse_out "$tool" "$base.out") || req=0
            # per-request call counts of the syscalls that matter (>= 0.01/request), execve & co. excluded
            summary=$(awk -v r="$req" '
                /^-/ || /^%/ || /total$/ {next}
                NF >= 5 { if (r > 0 && $4 / r >= 0.01) printf "%s %.2f, ", $NF, $4 / r }' "$base.strace" | sed 's/, $//')
            total=$(awk -v r="$req" '/total$/ { if (r > 0) printf "%.2f", $4 / r }' "$base.strace")
            echo "* **$scen / $tool** ($req requests): $total syscalls/request: $summary" >>"$out_md"
            log "strace $scen $tool: $total/req: $summary"
            sleep 1
        done
    done
fi
if [[ $MEMSCALE == 1 && $herd_ok == 1 ]]; then
    {
        echo
        echo "### Peak RSS against run length and threads (1-byte file, keep-alive, no quota, not pinned; /usr/bin/time %M)"
        echo
        echo "| command | requests | seconds | peak RSS KiB | bytes/request |"
        echo "|---|---|---|---|---|"
    } >>"$out_md"
    url="http://127.0.0.1:$PORT/f1.html"
    i=0
    for spec in "herd 100000 100" "herd 1000000 100" "herd 2000000 100" "herd 100000 1000" "herd 1000000 1000" \
                "herd1 1000000 1000" "ab 1000000 1000"; do
        read -r t n c <<<"$spec"
        case $t in
            herd) CMD=("$HERD" ab -q -k -n "$n" -c "$c" "$url") ;;
            herd1) CMD=("$HERD" ab -q -k -n "$n" -c "$c" --threads 1 "$url") ;;
            ab) CMD=(ab -q -k -n "$n" -c "$c" "$url") ;;
        esac
        i=$((i + 1))
        base=$RES/raw/mem-$i-$t-$n-$c
        timeout -k 5 "$RUN_LIMIT_S" /usr/bin/time -f '%e %M' -o "$base.time" "${CMD[@]}" >"$base.out" 2>"$base.err" ||
            log "WARNING: $t exit $?"
        read -r req _ < <(parse_out ab "$base.out") || req=0
        read -r e m < <(tail -1 "$base.time")
        line="| \`$(printf '%q ' "${CMD[@]}" | sed "s|$ROOT/||; s| \$||")\` | $req | $e | $m | $(awk -v m="$m" -v r="$req" 'BEGIN {if (r) printf "%.0f", m * 1024 / r}') |"
        echo "$line" >>"$out_md"
        log "mem: $line"
        sleep 1
    done
fi
if [[ $PERFREC == 1 ]]; then
    {
        echo
        echo "### perf record -e cpu-clock (ka-6397-c100, 300000 requests, pinned, no quota): share of samples"
        echo
    } >>"$out_md"
    SCALE_DIV=1
    NREQ[ka-6397-c100]=300000
    for tool in "${active[@]}"; do
        case $tool in floor | herd) ;; *) continue ;; esac
        build_cmd "$tool" ka-6397-c100
        base=$RES/raw/perfrec-$tool
        timeout -k 5 "$RUN_LIMIT_S" perf record -q -e cpu-clock -F 20000 -o "$base.data" -- taskset -c 1 "${CMD[@]}" \
            >"$base.out" 2>"$base.err" || log "WARNING: perf record $tool exit $?"
        perf report -i "$base.data" --no-children --sort dso -q 2>/dev/null | awk 'NF' >"$base.dso" || true
        perf report -i "$base.data" --no-children --sort dso,sym -q 2>/dev/null | awk 'NF && n++ < 80' >"$base.sym" || true
        {
            echo "* **$tool** by object: $(awk '$1+0 >= 0.05 {printf "%s %s, ", $2, $1}' "$base.dso" | sed 's/, $//')"
            echo "  * user-space symbols >= 0.1 %: $(awk '$3 == "[.]" && $1+0 >= 0.1 {s = $1 " "; for (i = 4; i <= NF; i++) s = s $i " "; printf "%s; ", s}' "$base.sym" |
                sed 's/; $//')"
        } >>"$out_md"
        rm -f "$base.data"
        sleep 1
    done
fi
cat "$out_md"
log "results: $RES"
