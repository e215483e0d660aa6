#!/usr/bin/env bash
# A new TLS connection per request (issue 31): ab, herd ab and herd run --no-keep-alive against
# nginx over TLS (one worker on CPU 0, bench/lib.sh's set-up), each client on CPU 1, -c 1, in
# interleaved rounds; with HERD_BEFORE, the same two herd commands of that build too (before and
# after a change in one run). Each tool's req/s and median ms come from its own output.
#
# usage: bench/tls-new-connection.sh [PORT]
# env:   ROUNDS=5  N=400  HERD=target/dist/herd  HERD_BEFORE=  (a frozen build to compare)
# Output: bench/results/<date>-tls-new-connection/runs.csv, versions.txt, raw/.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-5}
N=${N:-400}
HERD=${HERD:-$ROOT/target/dist/herd}
HERD_BEFORE=${HERD_BEFORE:-}

RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-tls-new-connection
mkdir -p "$RES/raw"
trap 'bench_cleanup' EXIT
trap 'exit 130' INT TERM

bench_setup "${1:-}"
URL="https://127.0.0.1:$H2_PORT/f6397.html"

{
    echo "date: $(date -u +%FT%TZ)"
    herd_versions "herd=$HERD" ${HERD_BEFORE:+"herd-before=$HERD_BEFORE"}
    echo "command: ROUNDS=$ROUNDS N=$N${HERD_BEFORE:+ HERD_BEFORE=$HERD_BEFORE} bench/tls-new-connection.sh${1:+ $1}"
    echo "ab: $(ab -V | head -1)"
    echo "nginx: $(nginx -v 2>&1)"
    echo "kernel: $(uname -r); cpus: $(nproc)"
    echo "url: $URL (-n $N -c 1, a new connection per request; client on CPU 1, nginx's worker on CPU 0)"
} >"$RES/versions.txt"
cat "$RES/versions.txt" >&2

tools="ab herd-ab herd-run"
[[ -n $HERD_BEFORE ]] && tools="$tools before-ab before-run"

# tool round → raw output file; prints "req/s median_ms".
run_tool() {
    local tool=$1 out=$2
    case $tool in
        ab) taskset -c 1 ab -n "$N" -c 1 "$URL" >"$out" 2>&1 ;;
        herd-ab) taskset -c 1 "$HERD" ab -n "$N" -c 1 "$URL" >"$out" 2>&1 ;;
        before-ab) taskset -c 1 "$HERD_BEFORE" ab -n "$N" -c 1 "$URL" >"$out" 2>&1 ;;
        herd-run) taskset -c 1 "$HERD" run -t 1 -c 1 -n "$N" -k --no-keep-alive --json "$out.json" "$URL" >"$out" 2>&1 ;;
        before-run) taskset -c 1 "$HERD_BEFORE" run -t 1 -c 1 -n "$N" -k --no-keep-alive --json "$out.json" "$URL" >"$out" 2>&1 ;;
    esac
    case $tool in
        *ab) awk '/^Requests per second:/ {r=$4} /^ +50%/ {m=$2} END {print r, m}' "$out" ;;
        *run) python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["requests"]["per_second"], j["latency_us"]["total"]["p50"]/1000)' "$out.json" ;;
    esac
}

echo "round,tool,requests_per_second,median_ms" >"$RES/runs.csv"
for round in $(seq "$ROUNDS"); do
    # A different order each round, so no tool always runs first.
    # shellcheck disable=SC2086  # $tools: one word per tool
    order=$(printf '%s\n' $tools | shuf --random-source=<(yes "$round"))
    for tool in $order; do
        read -r rps med < <(run_tool "$tool" "$RES/raw/$tool-$round.txt")
        echo "$round,$tool,$rps,$med" >>"$RES/runs.csv"
        log "round $round $tool: $rps req/s, median $med ms"
    done
done

python3 - "$RES/runs.csv" <<'EOF' | tee "$RES/summary.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tools = []
for r in rows:
    if r["tool"] not in tools:
        tools.append(r["tool"])
print("| tool | req/s (median of rounds) | median latency ms |")
print("|---|---|---|")
for t in tools:
    rps = [float(r["requests_per_second"]) for r in rows if r["tool"] == t]
    med = [float(r["median_ms"]) for r in rows if r["tool"] == t]
    print(f"| {t} | {statistics.median(rps):.1f} ({min(rps):.1f}-{max(rps):.1f}) | {statistics.median(med):.3f} |")
EOF
log "results in $RES"
