#!/usr/bin/env bash
# herd run's checks of issue 4 that are figures, not tests: latency accuracy against the C floor
# client, peak memory (-c 100 over short and long runs, 10,000 keep-alive connections), local
# ports with one source address and with --bind (in a network namespace of herd's), and the open
# loop's ceiling against the closed loop's under the client-bound quota of bench/run.sh.
#
# usage: bench/run-checks.sh [PORT]
# env:   HERD=path   the herd binary (default: target/dist/herd)
#        ROUNDS=N    rounds of the latency comparison (default 5)
#        SKIP="..."  any of: latency memory ports rate
# Needs root (net.core.somaxconn raised for the big runs and restored at exit; a network
# namespace herd-bench-ports, removed at exit; a cgroup for the quota).
# Output: bench/results/<date>-checks/{summary.md,versions.txt,raw/}.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

HERD=${HERD:-$ROOT/target/dist/herd}
ROUNDS=${ROUNDS:-5}
SKIP=${SKIP:-}
RES=$BENCH_HERE/results/$(date +%Y-%m-%d-%H%M%S)-checks
mkdir -p "$RES/raw"
SUMMARY=$RES/summary.md
OLD_SOMAXCONN=$(sysctl -n net.core.somaxconn)

NS_SERVE=
NS_CREATED=
cleanup() {
    local rc=$?
    if [[ -n $NS_SERVE ]]; then kill -INT "$NS_SERVE" 2>/dev/null || true; wait "$NS_SERVE" 2>/dev/null || true; fi
    if [[ -n $NS_CREATED ]]; then ip netns del herd-bench-ports 2>/dev/null || true; fi
    sysctl -qw net.core.somaxconn="$OLD_SOMAXCONN" || true
    bench_cleanup
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

skip() { [[ " $SKIP " == *" $1 "* ]]; }
say() { echo "$*" | tee -a "$SUMMARY"; }

# As many descriptors as this machine allows (10,000 connections and nginx's side of them).
ulimit -n "$(ulimit -Hn)"
sysctl -qw net.core.somaxconn=65535
NGINX_RLIMIT=$(ulimit -Hn) NGINX_WCONN=$(($(ulimit -Hn) - 100)) NGINX_BACKLOG=65535 bench_setup "${1:-}"
URL=http://127.0.0.1:$PORT

{
    echo "date: $(date -Is)"
    herd_versions "herd=$HERD"
    echo "wrk: $(wrk -v 2>&1 | head -1 || true)"
    echo "nginx: $(nginx -v 2>&1)"
    echo "kernel: $(uname -r); nproc: $(nproc)"
    echo "command: ROUNDS=$ROUNDS SKIP=\"$SKIP\" bench/run-checks.sh${1:+ $1}"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/versions.txt"
{
    echo "# herd run checks ($(date -Is))"
    echo
    grep -E '^(herd|wrk|nginx|kernel)' "$RES/versions.txt" | sed 's/$/  /'
    echo "nginx: 1 worker on CPU 0; clients on CPU 1 unless said otherwise"
    echo
} >"$SUMMARY"

# Runs a command under /usr/bin/time; prints "elapsed_s max_rss_kib".
timed() {
    local name=$1
    shift
    /usr/bin/time -f '%e %M' -o "$RES/raw/$name.time" timeout -k 5 300 "$@" >"$RES/raw/$name.out" 2>"$RES/raw/$name.err" || true
    printf '%q ' "$@" >"$RES/raw/$name.cmd"
    tail -1 "$RES/raw/$name.time"
}

jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {'d': d}))" "$@"; }

# --- 1. latency: one connection, closed loop, herd run vs the floor, interleaved -------------
if ! skip latency; then
    say "## p50 on one connection, closed loop (f1.html, 100,000 requests, µs)"
    say ""
    say "| round | floor p50 | herd run p50 | herd − floor | floor p99 | herd p99 |"
    say "|---|---|---|---|---|---|"
    for r in $(seq 1 "$ROUNDS"); do
        timed "lat-floor-r$r" taskset -c 1 "$FLOOR" -c 1 -n 100000 -k 1 -l 127.0.0.1 "$PORT" /f1.html >/dev/null
        fp50=$(sed -n 's/.*p50=\([0-9.]*\).*/\1/p' "$RES/raw/lat-floor-r$r.out")
        fp99=$(sed -n 's/.*p99=\([0-9.]*\).*/\1/p' "$RES/raw/lat-floor-r$r.out")
        timed "lat-herd-r$r" taskset -c 1 "$HERD" run -c 1 -t 1 -n 100000 --json "$RES/raw/lat-herd-r$r.json" "$URL/f1.html" >/dev/null
        hp50=$(jq_ "$RES/raw/lat-herd-r$r.json" "d['latency_us']['total']['p50']")
        hp99=$(jq_ "$RES/raw/lat-herd-r$r.json" "d['latency_us']['total']['p99']")
        say "| $r | $fp50 | $hp50 | $(python3 -c "print(f'{$hp50 - $fp50:+.1f}')") | $fp99 | $hp99 |"
        sleep 1
    done
    say ""
fi

# --- 2. memory --------------------------------------------------------------------------------
if ! skip memory; then
    say "## Peak RSS (KiB, /usr/bin/time %M)"
    say ""
    say "| run | elapsed s | peak RSS KiB | completed | failed |"
    say "|---|---|---|---|---|"
    row() {
        local name=$1 json=$2
        shift 2
        read -r e m < <(timed "$name" "$@")
        local c f
        if [[ -n $json ]]; then
            c=$(jq_ "$json" "d['requests']['completed']"); f=$(jq_ "$json" "d['requests']['failed']")
        else
            c=$(awk '/ requests in / {print $1}' "$RES/raw/$name.out"); f=-
        fi
        say "| \`$(sed "s|$RES/raw/||g; s|$HERD|herd|; s|$URL|URL|" "$RES/raw/$name.cmd")\` | $e | $m | $c | $f |"
    }
    row mem-herd-c100-5s "$RES/raw/mem-herd-c100-5s.json" taskset -c 1 "$HERD" run -c 100 -t 1 -d 5s --json "$RES/raw/mem-herd-c100-5s.json" "$URL/f6397.html"
    row mem-herd-c100-60s "$RES/raw/mem-herd-c100-60s.json" taskset -c 1 "$HERD" run -c 100 -t 1 -d 60s --json "$RES/raw/mem-herd-c100-60s.json" "$URL/f6397.html"
    row mem-wrk-c100-5s "" taskset -c 1 wrk -t1 -c100 -d5s "$URL/f6397.html"
    row mem-herd-c10k "$RES/raw/mem-herd-c10k.json" "$HERD" run -c 10000 -d 10s --json "$RES/raw/mem-herd-c10k.json" "$URL/f1.html"
    row mem-wrk-c10k "" wrk -t2 -c10000 -d10s "$URL/f1.html"
    say ""
fi

# --- 3. source addresses and local ports -------------------------------------------------------
# This machine's hard RLIMIT_NOFILE is 20,000 and the container lacks CAP_SYS_RESOURCE, so no
# process here can hold 50,000 sockets: the port mechanism is shown at a smaller scale instead,
# in a network namespace of herd's whose ephemeral range is narrowed to 1,000 ports. One source
# address can then hold 1,000 connections to the server; 49 (--bind 127.0.0.2-127.0.0.50)
# can hold 49,000.
if ! skip ports; then
    NS=herd-bench-ports
    ip netns add "$NS"
    NS_CREATED=1
    ip -n "$NS" link set lo up
    ip netns exec "$NS" sysctl -qw net.ipv4.ip_local_port_range="60000 60999"
    ip netns exec "$NS" "$HERD" serve --listen 127.0.0.1:8080 --threads 1 >"$RES/raw/ports-serve.out" 2>&1 &
    NS_SERVE=$!
    sleep 1
    say "## Local ports: 5,000 keep-alive connections in a namespace with 1,000 ephemeral ports (herd serve /bytes/1, 5 s)"
    say ""
    say "| sources | completed | failed | failures by kind | peak RSS KiB |"
    say "|---|---|---|---|---|"
    for variant in one bind; do
        args=()
        [[ $variant == bind ]] && args=(--bind 127.0.0.2-127.0.0.50)
        read -r _ m < <(timed "ports-$variant" ip netns exec "$NS" "$HERD" run -c 5000 -d 5s --timeout 10s "${args[@]}" --json "$RES/raw/ports-$variant.json" http://127.0.0.1:8080/bytes/1)
        j=$RES/raw/ports-$variant.json
        if [[ -s $j ]]; then
            say "| ${args[*]:-one address (127.0.0.1)} | $(jq_ "$j" "d['requests']['completed']") | $(jq_ "$j" "d['requests']['failed']") | $(jq_ "$j" "{k: v for k, v in d['failures'].items() if v}") | $m |"
        else
            say "| ${args[*]:-one address} | - | - | no JSON: $(tail -1 "$RES/raw/ports-$variant.err") | $m |"
        fi
        sleep 2
    done
    say ""
    kill -INT "$NS_SERVE" 2>/dev/null || true
    wait "$NS_SERVE" 2>/dev/null || true
    NS_SERVE=
    ip netns del "$NS"
    NS_CREATED=
fi

# --- 4. the open loop's ceiling under the client-bound quota ---------------------------------
if ! skip rate; then
    cg_setup 25000 100000
    say "## --rate against the closed-loop ceiling (client on CPU 1 under a 25 % quota, -c 100 -t 1, f6397.html, 5 s)"
    say ""
    incg() { python3 "$BENCH_HERE/rusage.py" "$RES/raw/$1.rusage" ${CG_CPU:+--cg "$CG_CPU"} -- taskset -c 1 "${@:2}"; }
    incg rate-closed "$HERD" run -c 100 -t 1 -d 5s --json "$RES/raw/rate-closed.json" "$URL/f6397.html" >/dev/null
    ceiling=$(jq_ "$RES/raw/rate-closed.json" "round(d['requests']['per_second'])")
    say "closed loop: $ceiling req/s"
    say ""
    say "| asked req/s | % of ceiling | achieved req/s | achieved / ceiling | queued p99 µs | total p99 µs | failed |"
    say "|---|---|---|---|---|---|---|"
    for pct in 90 95 100; do
        rate=$((ceiling * pct / 100))
        incg "rate-$pct" "$HERD" run -c 100 -t 1 -d 5s --rate "$rate" --json "$RES/raw/rate-$pct.json" "$URL/f6397.html" >/dev/null
        j=$RES/raw/rate-$pct.json
        say "| $rate | $pct % | $(jq_ "$j" "round(d['requests']['attempted_per_second'])") | $(jq_ "$j" "f\"{d['requests']['attempted_per_second'] / $ceiling:.3f}\"") | $(jq_ "$j" "d['latency_us']['queued'].get('p99')") | $(jq_ "$j" "d['latency_us']['total'].get('p99')") | $(jq_ "$j" "d['requests']['failed']") |"
        sleep 1
    done
    say ""
fi
log "results: $RES"
