#!/usr/bin/env bash
# Strict A/B/A/B pairs (baseline.md section 7b): tool B against tool A (default: herd against the floor),
# alternated back to back in one scenario, same set-up as run.sh (nginx on CPU 0; client on CPU 1 under
# the cgroup CPU quota), 1 warm-up pair then PAIRS counted pairs. Prints each pair's CPU/request ratio B/A
# and the median: the least drift-sensitive figure this noisy VM gives.
#
# With C, each pair is a triple: A, then B and C in alternating order (B C, C B, ...), and C/B is paired
# too. Before/after a change: C=herd B=herd-base HERD_BASE=/tmp/herd-before/herd (a frozen build).
#
# usage: bench/pairs.sh [PORT]
# env:   PAIRS=8  A=floor  B=herd  C=  SCENARIO=ka-6397-c100  QUOTA_PCT=25  HERD=target/dist/herd
#        (HTTP/2 and HTTP/3, issue 19: e.g. A=h2load-h2c B=herd-h2c SCENARIO=mux-6397-c10-m10; A=oha-h3 B=herd-h3)
#        (pipelined, issue 35: SCENARIO=ka-6397-c100-p16, whose A and B default to gcannon-p16
#        and herd-run-p16; gcannon runs WRK_S seconds)
#        HERD_BASE= (the binary of tool herd-base)
# Output: bench/results/<date>-pairs-<scenario>-<B>[-<C>]/pairs.md and pairs.csv (+ raw/).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

PAIRS=${PAIRS:-8}
SCENARIO=${SCENARIO:-ka-6397-c100}
if [[ -n ${DEPTH[$SCENARIO]:-} ]]; then   # a pipelined scenario: its depth's tools by default
    A=${A:-gcannon-p${DEPTH[$SCENARIO]}}
    B=${B:-herd-run-p${DEPTH[$SCENARIO]}}
else
    A=${A:-floor}
    B=${B:-herd}
fi
C=${C:-}
QUOTA_PCT=${QUOTA_PCT:-25}
HERD=${HERD:-$ROOT/target/dist/herd}
SCALE_DIV=1 WRK_S=${WRK_S:-4}
RUN_LIMIT_S=${RUN_LIMIT_S:-120}
TOOLS="$A $B${C:+ $C}"
for t in $TOOLS; do
    fits "$t" "$SCENARIO" ||
        { echo "tool $t does not run scenario $SCENARIO (see fits in bench/lib.sh)" >&2; exit 64; }
done

RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-pairs-$SCENARIO-$B${C:+-$C}
mkdir -p "$RES/raw"
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM

bench_setup "${1:-}"
if [[ " $TOOLS " == *-h3\ * || " $TOOLS " == *-h3-uring\ * ]]; then caddy_setup; fi   # the HTTP/3 tools' server
cg_setup $((100000 * QUOTA_PCT / 100)) 100000
detect_tools
want=2
[[ -n $C ]] && want=3
[[ ${#active[@]} == "$want" ]] || { log "need all of: $TOOLS"; exit 1; }
{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    echo "nginx: $(nginx -v 2>&1)"
    [[ -n $CADDY_PID ]] && echo "caddy: $(caddy version 2>&1 | head -1)"
    # the binaries of the herd tools asked for: herd, herd-run, herd-h2c, ... run $HERD; herd-base, herd-run-base
    # and herd-h2c-base run $HERD_BASE
    bins=()
    for t in $TOOLS; do
        case $t in
            herd*-base) if [[ " ${bins[*]} " != *" herd-base="* ]]; then bins+=("herd-base=${HERD_BASE:-}"); fi ;;
            herd*) if [[ " ${bins[*]} " != *" herd="* ]]; then bins+=("herd=$HERD"); fi ;;
        esac
    done
    herd_versions "${bins[@]}"
    [[ " $TOOLS " == *" gcannon"* ]] && gcannon_version
    echo "command: QUOTA_PCT=$QUOTA_PCT PAIRS=$PAIRS A=$A B=$B${C:+ C=$C} SCENARIO=$SCENARIO bench/pairs.sh${1:+ $1}"
    echo "cgroup: $CG_MODE $CG_CPU quota $QUOTA_PCT %"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/versions.txt"

csv=$RES/pairs.csv
# requests: the tool's own count, or nginx's for a tool whose count leaves some out
# (counts_at_server); tool_requests: the tool's own count always; failed: parse_out's
echo "pair,tool,requests,seconds,user,sys,cpu_us_per_req,tool_requests,failed" >"$csv"
one() {
    local tool=$1 pair=$2 base cgopt=() e u s req treq fail n0 n1
    build_cmd "$tool" "$SCENARIO"
    [[ $PIN == 1 ]] && CMD=(taskset -c 1 "${CMD[@]}")
    [[ -n $CG_CPU ]] && cgopt+=(--cg "$CG_CPU")
    base=$RES/raw/$pair-$tool
    printf '%q ' "${CMD[@]}" >"$base.cmd"
    n0=$(nginx_requests || echo)
    python3 "$BENCH_HERE/rusage.py" "$base.rusage" "${cgopt[@]}" -- timeout -k 5 "$RUN_LIMIT_S" "${CMD[@]}" \
        >"$base.out" 2>"$base.err" || log "WARNING: $tool exit $?"
    n1=$(nginx_requests || echo)
    read -r req treq fail < <(run_requests "$tool" "$base.out" "$n0" "$n1")
    read -r e u s _ _ <"$base.rusage"
    echo "$pair,$tool,$req,$e,$u,$s,$(awk -v u="$u" -v s="$s" -v r="$req" 'BEGIN {if (r) printf "%.3f", (u + s) * 1e6 / r}'),$treq,$fail" >>"$csv"
    [[ ${fail:-0} == 0 ]] || log "WARNING: $tool: $fail failed (see $base.out)"
    log "pair $pair $tool: $(tail -1 "$csv")"
    sleep 1
}
for pair in $(seq 0 "$PAIRS"); do   # pair 0 is the warm-up
    one "$A" "$pair"
    if [[ -n $C && $((pair % 2)) == 1 ]]; then
        one "$C" "$pair"
        one "$B" "$pair"
    else
        one "$B" "$pair"
        if [[ -n $C ]]; then one "$C" "$pair"; fi
    fi
done

# shellcheck disable=SC2086  # $C: no argument when there is no third tool
python3 - "$csv" "$SCENARIO" "$QUOTA_PCT" "$A" "$B" $C <<'EOF' | tee "$RES/pairs.md"
import csv, statistics, sys
path, scen, q, a, *others = sys.argv[1:]
tools = [a, *others]
rows = [r for r in csv.DictReader(open(path)) if r["pair"] != "0"]
by = {}
for r in rows:
    # A run that reported no requests has no figure; its pair is left out of the ratios.
    if r["cpu_us_per_req"]:
        by.setdefault(r["pair"], {})[r["tool"]] = float(r["cpu_us_per_req"])
pairs = [p for p in by.values() if all(t in p for t in tools)]
comparisons = [(b, a) for b in others] + ([(others[1], others[0])] if len(others) == 2 else [])
print(f"### Strict pairs, {scen}, client CPU quota {q} %: {', '.join(others)} against {a} "
      f"({len(pairs)} counted pairs + 1 warm-up)\n")
print("| pair | " + " | ".join(f"{t} µs/req" for t in tools) + " | "
      + " | ".join(f"ratio {x}/{y}" for x, y in comparisons) + " |")
print("|---" * (1 + len(tools) + len(comparisons)) + "|")
for k, p in by.items():
    cells = [f"{p[t]:.2f}" if t in p else "n/a" for t in tools]
    cells += [f"x{p[x] / p[y]:.3f}" if x in p and y in p else "n/a" for x, y in comparisons]
    print(f"| {k} | " + " | ".join(cells) + " |")
print()
for x, y in comparisons:
    r = [p[x] / p[y] for p in pairs]
    print(f"median CPU/request ratio {x}/{y}: **x{statistics.median(r):.3f}** "
          f"(min x{min(r):.3f}, max x{max(r):.3f})  ")
print("median µs/req: " + ", ".join(f"{t} {statistics.median(p[t] for p in pairs):.2f}" for t in tools) + "  ")
# req/s: requests (as counted above) over the run's wall time, start-up and exit included
rps = {}
for r in rows:
    if r["cpu_us_per_req"] and r["pair"] in {k for k, p in by.items() if all(t in p for t in tools)}:
        rps.setdefault(r["tool"], []).append(int(r["requests"]) / float(r["seconds"]))
print("median req/s (requests / wall time): "
      + ", ".join(f"{t} {statistics.median(rps[t]):,.0f}" for t in tools if t in rps))
EOF
log "results: $RES"
