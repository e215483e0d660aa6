#!/usr/bin/env bash
# Issue 35 point 4: "coordinated-omission figures (latency from the intended send) equal across
# backends within noise on a paced run". The same open-loop run of herd run against the same
# nginx (bench/lib.sh: one worker on CPU 0), on epoll and on io_uring in turn, ROUNDS times
# (epoll, uring, epoll, uring, ...: a drift of the machine falls on both), herd on CPU 1. Each
# run's latency from the intended send (latency_us.total), from the actual send
# (total_from_send) and its send lag are read from its JSON; the summary puts each backend's
# rounds side by side, with the median of the rounds and the ratio uring / epoll. "Within
# noise" is judged against the spread of each backend's own rounds, which the table shows.
#
# usage: bench/co-backends.sh [PORT]   (PORT: a free port for nginx; default: first free of
#                                      18080-18179)
# env:   RATE=2000     requests/s asked (herd run --rate), well under what nginx and herd carry
#        CONNS=20      connections (-c)
#        DURATION=10   seconds per run (-d)
#        ROUNDS=3      runs per backend
#        FILE=f6397.html  what is asked for (f1.html, f6397.html or f1m.bin)
#        HERD=path     the herd binary (default: target/dist/herd)
#        PROTO=h1      h1: HTTP/1.1 against nginx; h3: HTTP/3 against caddy (bench/lib.sh's, on
#                      CPU 0; herd run --h3 -k), QUIC on each backend
# Output: bench/results/<date>-co-backends[-h3]/ (versions.txt with the command, summary.md, raw/:
# each run's command, output and JSON). nginx is stopped by its own PID; loopback only.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

RATE=${RATE:-2000}
CONNS=${CONNS:-20}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
FILE=${FILE:-f6397.html}
HERD=${HERD:-$ROOT/target/dist/herd}
PROTO=${PROTO:-h1}

for v in RATE CONNS DURATION ROUNDS; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$v must be a positive whole number, not ${!v}" >&2; exit 64; }
done
case $PROTO in
    h1 | h3) ;;
    *) echo "PROTO must be h1 or h3, not $PROTO" >&2; exit 64 ;;
esac
case $FILE in
    f1.html | f6397.html | f1m.bin) ;;
    *) echo "FILE must be f1.html, f6397.html or f1m.bin, not $FILE" >&2; exit 64 ;;
esac
[[ -x $HERD ]] ||
    { echo "no herd binary at $HERD (cargo build --profile dist -p herd, or HERD=)" >&2; exit 1; }

STAMP=$(date +%Y-%m-%d-%H%M%S)
suffix=
[[ $PROTO == h3 ]] && suffix=-h3
RES=${RES:-$BENCH_HERE/results/$STAMP-co-backends$suffix}
mkdir -p "$RES/raw"

cleanup() {
    local rc=$?
    bench_cleanup
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_setup "${1:-}"
URL=http://127.0.0.1:$PORT/$FILE
PROTO_ARGS=()
if [[ $PROTO == h3 ]]; then
    caddy_setup
    URL=https://127.0.0.1:$H3_PORT/$FILE
    PROTO_ARGS=(--h3 -k)
fi

# Both backends must run here, or nothing is measured: herd refuses a backend it cannot run
# before it sends anything.
for io in epoll uring; do
    if ! pre=$("$HERD" run "${PROTO_ARGS[@]}" --io "$io" -n 1 -c 1 "$URL" 2>&1); then
        log "herd run --io $io cannot run here; stopping (nothing measured):"
        printf '%s\n' "$pre" | sed 's/^/    /' >&2
        rm -rf "$RES"
        exit 1
    fi
done

{
    echo "date: $(date -Is)"
    echo "nproc: $(nproc)"
    echo "cpu: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
    echo "kernel: $(uname -srvm)"
    echo "nginx: $(nginx -v 2>&1)"
    [[ $PROTO == h3 ]] && echo "caddy: $(caddy version 2>&1 | head -1)"
    herd_versions "herd=$HERD"
    echo "command: RATE=$RATE CONNS=$CONNS DURATION=$DURATION ROUNDS=$ROUNDS FILE=$FILE PROTO=$PROTO" \
        "bench/co-backends.sh${1:+ $1}"
} >"$RES/versions.txt"

for round in $(seq "$ROUNDS"); do
    for io in epoll uring; do
        name="$io-$round"
        cmd=(taskset -c 1 "$HERD" run "${PROTO_ARGS[@]}" --io "$io" --rate "$RATE" -c "$CONNS" -t 1
            -d "${DURATION}s" --json "$RES/raw/$name.json" "$URL")
        printf '%q ' "${cmd[@]}" >"$RES/raw/$name.cmd"
        log "round $round: herd run ${PROTO_ARGS[*]} --io $io --rate $RATE -c $CONNS -d ${DURATION}s"
        "${cmd[@]}" >"$RES/raw/$name.out" 2>&1 ||
            { log "ERROR: herd run failed (raw/$name.out)"; exit 1; }
    done
done

python3 - "$RES" "$ROUNDS" "$RATE" "$CONNS" "$DURATION" "$FILE" "$PROTO" <<'EOF' >"$RES/summary.md"
import json, statistics, sys
res, rounds, rate, conns, duration, file, proto = sys.argv[1:8]
rounds = int(rounds)
rows = [
    ("latency from the intended send, p50", ("latency_us", "total", "p50")),
    ("latency from the intended send, p90", ("latency_us", "total", "p90")),
    ("latency from the intended send, p99", ("latency_us", "total", "p99")),
    ("latency from the actual send, p50", ("latency_us", "total_from_send", "p50")),
    ("latency from the actual send, p99", ("latency_us", "total_from_send", "p99")),
    ("send lag p99", ("client", "send_lag_us", "p99")),
    ("achieved req/s", ("requests", "attempted_per_second")),
]
runs = {io: [json.load(open(f"{res}/raw/{io}-{r}.json")) for r in range(1, rounds + 1)]
        for io in ("epoll", "uring")}
for io, js in runs.items():
    for j in js:
        if j["io"]["backend"] != {"epoll": "epoll", "uring": "io_uring"}[io]:
            sys.exit(f"a run asked for {io} measured on {j['io']['backend']}")
def get(j, path):
    for k in path:
        j = j[k]
    return float(j)
over = {"h1": "HTTP/1.1 against nginx", "h3": "HTTP/3 against caddy"}[proto]
print(f"# herd run, paced, {over}: {rate} req/s, {conns} connections, {duration} s, GET /{file}, "
      f"epoll and io_uring in turn, {rounds} rounds each (µs unless said)\n")
print("| figure | epoll rounds | io_uring rounds | median epoll | median io_uring | io_uring / epoll |")
print("|---|---|---|---|---|---|")
for label, path in rows:
    e = [get(j, path) for j in runs["epoll"]]
    u = [get(j, path) for j in runs["uring"]]
    me, mu = statistics.median(e), statistics.median(u)
    fmt = lambda xs: ", ".join(f"{x:,.0f}" for x in xs)
    ratio = f"×{mu / me:.2f}" if me > 0 else "—"
    print(f"| {label} | {fmt(e)} | {fmt(u)} | {me:,.0f} | {mu:,.0f} | {ratio} |")
verdicts = {io: [j["client"]["verdict"] for j in js] for io, js in runs.items()}
print(f"\nclient verdicts: epoll {', '.join(verdicts['epoll'])}; io_uring {', '.join(verdicts['uring'])}")
EOF
cat "$RES/summary.md"
log "results: $RES"
