#!/usr/bin/env bash
# User-space instructions per request, counted by valgrind's callgrind: the one client-cost figure this
# noisy VM cannot blur (CPU time per request drifts from minute to minute; instruction counts do not).
# Each tool runs a scenario at N and at 2N requests against the same nginx as run.sh; the difference
# divided by N is the cost of a request, with start-up, the report and exit taken out. Under valgrind
# the client runs one thread at a time, so the counts say nothing about time, only about work.
# Every client runs through bench/noauxv (see noauxv.c: rustix reads the aux vector in a way valgrind
# does not follow).
#
# usage: bench/instructions.sh [PORT]
# env:   TOOLS="floor herd-base herd" (or herd-run-base herd-run: the same through herd run)  SCENARIOS="ka-6397-c100 close-6397-c100"  N_KA=20000  N_CLOSE=4000
#        REPEAT=2  HERD=target/dist/herd  HERD_BASE= (the binary of tool herd-base, e.g. a frozen "before")
#        KEEP_CALLGRIND=1 keeps each run's callgrind output in raw/ (callgrind_annotate --inclusive=yes
#        on two of them says where a difference goes)
#        A pipelined scenario (issue 35: ka-6397-c100-p16, N_KA requests) runs only the tools of
#        its depth (herd-run-p16, herd-run-base-p16: the default TOOLS add them), and those tools
#        only it: a pair that does not fit is skipped, so TOOLS="herd-run-base herd-run herd-run-base-p16 herd-run-p16"
#        SCENARIOS="ka-6397-c100 close-6397-c100 ka-6397-c100-p16" counts each scenario once per
#        binary. gcannon runs for a duration, not a count: no figure.
# Output: bench/results/<date>-instructions/instructions.md and .csv (+ raw/).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

HERD=${HERD:-$ROOT/target/dist/herd}
SCENARIOS=${SCENARIOS:-ka-6397-c100 close-6397-c100}
if [[ -z ${TOOLS:-} ]]; then   # default: the floor and herd ab, and herd run for a pipelined scenario
    TOOLS="floor herd-base herd"
    for scen in $SCENARIOS; do
        d=${DEPTH[$scen]:-}
        [[ -n $d && " $TOOLS " != *" herd-run-p$d "* ]] && TOOLS+=" herd-run-base-p$d herd-run-p$d"
    done
fi
N_KA=${N_KA:-20000}
N_CLOSE=${N_CLOSE:-4000}
REPEAT=${REPEAT:-2}
RUN_LIMIT_S=${RUN_LIMIT_S:-600}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install -y valgrind)" >&2; exit 1; }

RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-instructions
mkdir -p "$RES/raw"
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM

NOAUXV=$BENCH_HERE/noauxv
if [[ ! -x $NOAUXV || $BENCH_HERE/noauxv.c -nt $NOAUXV ]]; then
    gcc -O2 -Wall -Wextra -Werror -o "$NOAUXV" "$BENCH_HERE/noauxv.c"
fi

bench_setup "${1:-}"
detect_tools
{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    echo "valgrind: $(valgrind --version)"
    echo "nginx: $(nginx -v 2>&1)"
    echo "gcc: $(gcc --version | head -1)"
    herd_versions "herd=$HERD" ${HERD_BASE:+"herd-base=$HERD_BASE"}
    echo "command: TOOLS=\"$TOOLS\" SCENARIOS=\"$SCENARIOS\" REPEAT=$REPEAT N_KA=$N_KA N_CLOSE=$N_CLOSE bench/instructions.sh${1:+ $1}"
} >"$RES/versions.txt"

csv=$RES/instructions.csv
echo "tool,scenario,rep,requests,instructions" >"$csv"
# Runs tool $1 in scenario $2 for $3 requests under callgrind; appends the total instruction count.
count() {
    local tool=$1 scen=$2 n=$3 rep=$4 base out ir req
    NREQ[$scen]=$n
    SCALE_DIV=1 build_cmd "$tool" "$scen"
    base=$RES/raw/$tool-$scen-$n-$rep
    out=$base.callgrind
    printf '%q ' "${CMD[@]}" >"$base.cmd"
    timeout -k 5 "$RUN_LIMIT_S" "$NOAUXV" valgrind --tool=callgrind --callgrind-out-file="$out" "${CMD[@]}" \
        >"$base.out" 2>"$base.err" || log "WARNING: $tool exit $?"
    read -r req _ < <(parse_out "$tool" "$base.out") || req=0
    [[ $req == "$n" ]] || log "WARNING: $tool completed $req of $n requests"
    ir=$(awk '/^summary:/ {print $2}' "$out")
    echo "$tool,$scen,$rep,$req,$ir" >>"$csv"
    log "$tool $scen n=$n rep $rep: $ir instructions"
    [[ ${KEEP_CALLGRIND:-0} == 1 ]] || rm -f "$out"
}
for scen in $SCENARIOS; do
    [[ -n ${NREQ[$scen]:-} ]] || { log "unknown scenario $scen"; exit 64; }
done
for tool in "${active[@]}"; do
    [[ $tool == gcannon* ]] &&
        log "WARNING: $tool runs for a duration, so (I(2N) - I(N)) / N cannot be taken: skipped"
done
for scen in $SCENARIOS; do
    n=$N_KA
    [[ ${KA[$scen]} == 0 ]] && n=$N_CLOSE
    for rep in $(seq 1 "$REPEAT"); do
        for tool in "${active[@]}"; do
            fits "$tool" "$scen" || continue
            [[ $tool == gcannon* ]] && continue
            count "$tool" "$scen" "$n" "$rep"
            count "$tool" "$scen" $((2 * n)) "$rep"
        done
    done
done

python3 - "$csv" <<'EOF' | tee "$RES/instructions.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tools = list(dict.fromkeys(r["tool"] for r in rows))
scens = list(dict.fromkeys(r["scenario"] for r in rows))
per = {}
for s in scens:
    for t in tools:
        reps = {}
        for r in rows:
            if r["tool"] == t and r["scenario"] == s and r["instructions"]:
                reps.setdefault(r["rep"], {})[int(r["requests"])] = int(r["instructions"])
        vals = []
        for by_n in reps.values():
            if len(by_n) == 2:
                lo, hi = sorted(by_n)
                vals.append((by_n[hi] - by_n[lo]) / (hi - lo))
        if vals:
            per[(s, t)] = vals
print("### User-space instructions per request (callgrind; (I(2N) - I(N)) / N)\n")
print("| scenario | " + " | ".join(tools) + " |")
print("|---" * (1 + len(tools)) + "|")
for s in scens:
    cells = []
    for t in tools:
        v = per.get((s, t))
        cells.append("n/a" if not v else f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})")
    print(f"| {s} | " + " | ".join(cells) + " |")
pairs = [("herd-base", "herd"), ("herd-run-base", "herd-run")]
pairs += [(t, t.replace("-base-p", "-p")) for t in tools if t.startswith("herd-run-base-p")]
for base, new in pairs:
    if base in tools and new in tools:
        print()
        for s in scens:
            a, b = per.get((s, base)), per.get((s, new))
            if a and b:
                print(f"{s}: {new}/{base} x{statistics.median(b) / statistics.median(a):.3f}  ")
EOF
log "results: $RES"
