#!/usr/bin/env bash
# herd serve's user-space instructions per request, counted by valgrind's callgrind: the figure this
# busy VM cannot blur (bench/instructions.sh does the same for clients). Each herd serve binary runs
# under callgrind (one worker, through bench/noauxv), answers N and then 2N requests in two separate
# runs, and stops on SIGINT; (I(2N) - I(N)) / N is the cost of a request with start-up and exit taken
# out. Under valgrind the server is slow, so the counts say nothing about time, only about work.
#
# usage: bench/serve-instructions.sh
# env:   HERD=target/dist/herd  HERD_BASE=  (a frozen "before" binary; its rows are skipped without)
#        N_KA=20000  N_CLOSE=4000  N_H2=20000  FILE=f6397.html
# Scenarios: ka (ab -k -c10: HTTP/1.0 keep-alive), close (ab -c10: a connection per request),
# h2c (h2load -c4 -m10, for HERD only: the base has no HTTP/2).
# Output: bench/results/<date>-serve-instructions/ (serve-instructions.md, .csv, versions.txt).
set -euo pipefail

# Read before lib.sh, which declares FILE as its scenarios' array (and so drops the environment's FILE).
SERVE_FILE=${FILE:-f6397.html}
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

HERD=${HERD:-$ROOT/target/dist/herd}
HERD_BASE=${HERD_BASE:-}
N_KA=${N_KA:-20000}
N_CLOSE=${N_CLOSE:-4000}
N_H2=${N_H2:-20000}
for tool in valgrind ab h2load gcc python3; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (valgrind, apache2-utils, nghttp2-client, gcc)" >&2; exit 1; }
done

NOAUXV=$BENCH_HERE/noauxv
if [[ ! -x $NOAUXV || $BENCH_HERE/noauxv.c -nt $NOAUXV ]]; then
    gcc -O2 -Wall -Wextra -Werror -o "$NOAUXV" "$BENCH_HERE/noauxv.c"
fi
RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-serve-instructions
mkdir -p "$RES/raw"
WORK=$(mktemp -d /tmp/herd-serve-ir.XXXXXX)
mkdir -p "$WORK/www"
python3 -c 'import sys; sys.stdout.write(("0123456789abcdef" * 400)[:6397])' >"$WORK/www/f6397.html"
python3 -c 'import sys; sys.stdout.write(("0123456789abcdef" * 10)[:100])' >"$WORK/www/f100.html"
SERVER_PID=
cleanup() {
    [[ -n $SERVER_PID ]] && kill -INT "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    echo "valgrind: $(valgrind --version)"
    herd_versions "herd=$HERD" ${HERD_BASE:+"herd-base=$HERD_BASE"}
    echo "command: N_KA=$N_KA N_CLOSE=$N_CLOSE N_H2=$N_H2 FILE=$SERVE_FILE bench/serve-instructions.sh"
    echo "ab: $(ab -V | head -1); h2load: $(h2load --version | head -1)"
    echo "file: $SERVE_FILE"
} >"$RES/versions.txt"

# Instructions of one server run answering $3 requests of scenario $2, binary $1.
count() {
    local bin=$1 scen=$2 n=$3 out port url line
    out=$RES/raw/$(basename "$bin")-$scen-$n.callgrind
    port=$(pick_port)
    "$NOAUXV" valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" serve --threads 1 \
        --root "$WORK/www" --listen "127.0.0.1:$port" >"$WORK/serve.out" 2>"$WORK/serve.err" &
    SERVER_PID=$!
    for _ in $(seq 600); do
        line=$(head -1 "$WORK/serve.out" 2>/dev/null || true)
        [[ $line == listening* ]] && break
        sleep 0.1
    done
    [[ $line == listening* ]] || { echo "herd serve did not start: $(cat "$WORK/serve.err")" >&2; exit 1; }
    url=http://127.0.0.1:$port/$SERVE_FILE
    case $scen in
        ka) ab -q -k -c 10 -n "$n" "$url" >"$out.client" ;;
        close) ab -q -c 10 -n "$n" "$url" >"$out.client" ;;
        h2c) h2load -c 4 -m 10 -n "$n" "$url" >"$out.client" ;;
    esac
    kill -INT "$SERVER_PID"
    wait "$SERVER_PID" || true
    SERVER_PID=
    grep -q "stopped after $n requests" "$WORK/serve.err" ||
        { echo "$scen: the server did not answer exactly $n requests: $(cat "$WORK/serve.err")" >&2; exit 1; }
    awk '/^summary:/ {print $2}' "$out"
}

echo "binary,scenario,n,instructions_n,instructions_2n,per_request" >"$RES/serve-instructions.csv"
for bin in ${HERD_BASE:+"$HERD_BASE"} "$HERD"; do
    for scen in ka close h2c; do
        [[ $scen == h2c && $bin == "$HERD_BASE" ]] && continue
        case $scen in ka) n=$N_KA ;; close) n=$N_CLOSE ;; h2c) n=$N_H2 ;; esac
        one=$(count "$bin" "$scen" "$n")
        two=$(count "$bin" "$scen" $((2 * n)))
        per=$(( (two - one) / n ))
        name=herd; [[ $bin == "$HERD_BASE" ]] && name=herd-base
        echo "$name,$scen,$n,$one,$two,$per" >>"$RES/serve-instructions.csv"
        log "$name $scen: $per instructions per request"
    done
done
{
    echo "| binary | scenario | N | instructions per request |"
    echo "|---|---|---|---|"
    tail -n +2 "$RES/serve-instructions.csv" | awk -F, '{printf "| %s | %s | %s | %\047d |\n", $1, $2, $3, $6}'
} >"$RES/serve-instructions.md"
cat "$RES/serve-instructions.md"
log "results in $RES"
