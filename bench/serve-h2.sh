#!/usr/bin/env bash
# herd serve over HTTP/2 against nginx, and herd serve's HTTP/1 before and after, side by side.
#
# usage: bench/serve-h2.sh
# env:   ROUNDS=3          rounds; every run of a round goes once per round, the order rotated
#        REQUESTS=200000   h2load requests per run (-n)
#        DURATION=5        seconds per wrk run (the HTTP/1 part)
#        HERD=path         the herd binary measured (default: target/dist/herd)
#        HERD_BEFORE=path  a herd binary from before the change, for the HTTP/1 rows (optional)
#        FILE=f6397.html   the file fetched (www/f6397.html, 6397 bytes, or www/f100.html)
#        HERD_ENV="K=V …"  environment for the measured herd serve only (HERD_SERVE_IO=uring: the io_uring
#                          trial of issue 35, against the same binary on epoll as HERD_BEFORE)
#        BEFORE_ENV="K=V …" the same for HERD_BEFORE's herd serve
#        H1_ONLY=1         only the HTTP/1 runs (no h2c)
#
# Set-up: every server pinned to CPU 0 (taskset -c 0, one worker: herd serve --threads 1, nginx
# worker_processes 1), every client to CPU 1. HTTP/2 with prior knowledge (h2c) on a plain port,
# the client h2load -t1 -c4 -m10 (4 connections, 10 streams each); nginx's `listen ... http2`
# without ssl is prior-knowledge h2c in 1.22, with keepalive_requests raised so that it does not
# send GOAWAY after 1000 requests (h2load does not reconnect). HTTP/1: wrk -t1 -c50, keep-alive,
# and with HERD_BEFORE also `Connection: close` (a connection per request) for both herds and
# nginx, and h2c for the herd before too.
# Per run: the client's req/s and the server's CPU time per request (/proc/PID/task/*/schedstat).
# Before any timing each URL is checked (status, length; over h2c the protocol h2load reports).
# Output: bench/results/<stamp>-serve-h2/ (runs.csv, summary.md; raw/ is not committed).
# Everything started here is stopped by its own PID on exit, Ctrl-C or error.
set -euo pipefail

# Read before lib.sh, which declares FILE as its scenarios' array (and so drops the environment's FILE).
SERVE_FILE=${FILE:-f6397.html}
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"   # log, pick_port, port_is_free, nginx_stop (NGINX_PID, NGINX_WORKER), herd_versions

ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-200000}
DURATION=${DURATION:-5}
HERD=${HERD:-$ROOT/target/dist/herd}
HERD_BEFORE=${HERD_BEFORE:-}
HERD_ENV=${HERD_ENV:-}
BEFORE_ENV=${BEFORE_ENV:-}
H1_ONLY=${H1_ONLY:-0}

die() { log "error: $*"; exit 1; }
for tool in h2load wrk nginx curl taskset python3; do
    command -v "$tool" >/dev/null || die "$tool is missing (h2load: apt-get install nghttp2-client)"
done
[[ -x $HERD ]] || die "no herd binary at $HERD (cargo build --profile dist -p herd)"

STAMP=$(date -u +%Y-%m-%d-%H%M%S)
OUT=$ROOT/bench/results/$STAMP-serve-h2
mkdir -p "$OUT/raw"
WORK=$(mktemp -d /tmp/herd-serve-h2.XXXXXX)
mkdir -p "$WORK/www" "$WORK/tmp"
chmod 755 "$WORK" "$WORK/www"
python3 -c 'import sys; sys.stdout.write(("0123456789abcdef" * 400)[:6397])' >"$WORK/www/f6397.html"
python3 -c 'import sys; sys.stdout.write(("0123456789abcdef" * 10)[:100])' >"$WORK/www/f100.html"
chmod 644 "$WORK/www/"*
SIZE=$(stat -c %s "$WORK/www/$SERVE_FILE")

HERD_PID= ; BEFORE_PID=
cleanup() {
    local p
    for p in $HERD_PID $BEFORE_PID; do kill -INT "$p" 2>/dev/null || true; done
    nginx_stop
    for p in $HERD_PID $BEFORE_PID; do wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Four free ports of 18080-18179 (never 80, 2024 or 8080).
PORTS=()
for p in $(seq 18080 18179); do
    if port_is_free "$p"; then PORTS+=("$p"); fi
    [[ ${#PORTS[@]} == 4 ]] && break
done
[[ ${#PORTS[@]} == 4 ]] || die "fewer than 4 free ports in 18080-18179"
P_HERD=${PORTS[0]}; P_NGINX=${PORTS[1]}; P_NGINX_H1=${PORTS[2]}; P_BEFORE=${PORTS[3]}
# shellcheck disable=SC2086 # HERD_ENV is a list of K=V words
env $HERD_ENV taskset -c 0 "$HERD" serve --threads 1 --root "$WORK/www" --listen "127.0.0.1:$P_HERD" >"$WORK/herd.out" 2>&1 &
HERD_PID=$!
if [[ -n $HERD_BEFORE ]]; then
    # shellcheck disable=SC2086 # BEFORE_ENV is a list of K=V words
    env $BEFORE_ENV taskset -c 0 "$HERD_BEFORE" serve --threads 1 --root "$WORK/www" --listen "127.0.0.1:$P_BEFORE" >"$WORK/before.out" 2>&1 &
    BEFORE_PID=$!
fi
cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
worker_cpu_affinity 01;
daemon on;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; use epoll; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    default_type application/octet-stream;
    types { text/html html; }
    client_body_temp_path $WORK/tmp/body;
    proxy_temp_path $WORK/tmp/proxy;
    fastcgi_temp_path $WORK/tmp/fastcgi;
    uwsgi_temp_path $WORK/tmp/uwsgi;
    scgi_temp_path $WORK/tmp/scgi;
    server { listen 127.0.0.1:$P_NGINX http2 backlog=4096; root $WORK/www; }
    server { listen 127.0.0.1:$P_NGINX_H1 backlog=4096; root $WORK/www; }
}
EOF
taskset -c 0 nginx -c "$WORK/nginx.conf" -p "$WORK/" -e "$WORK/nginx-error.log" || die "nginx did not start"
for _ in $(seq 50); do [[ -s $WORK/nginx.pid ]] && break; sleep 0.1; done
NGINX_PID=$(cat "$WORK/nginx.pid")
for _ in $(seq 50); do
    NGINX_WORKER=$(awk '{print $1}' "/proc/$NGINX_PID/task/$NGINX_PID/children" 2>/dev/null || true)
    [[ -n $NGINX_WORKER ]] && break
    sleep 0.1
done
[[ -n $NGINX_WORKER ]] || die "nginx worker not found"
sleep 0.5

cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%.0f\n", s}'; }

# name → "pid protocol url"
declare -A RUN
RUN[herd-h2c]="$HERD_PID h2c http://127.0.0.1:$P_HERD/$SERVE_FILE"
RUN[nginx-h2c]="$NGINX_WORKER h2c http://127.0.0.1:$P_NGINX/$SERVE_FILE"
RUN[herd-h1]="$HERD_PID h1 http://127.0.0.1:$P_HERD/$SERVE_FILE"
RUN[nginx-h1]="$NGINX_WORKER h1 http://127.0.0.1:$P_NGINX_H1/$SERVE_FILE"
NAMES=(herd-h2c nginx-h2c herd-h1 nginx-h1)
[[ $H1_ONLY == 1 ]] && NAMES=(herd-h1 nginx-h1)
if [[ -n $HERD_BEFORE ]]; then
    RUN[herd-before-h1]="$BEFORE_PID h1 http://127.0.0.1:$P_BEFORE/$SERVE_FILE"
    RUN[herd-h1-close]="$HERD_PID h1-close http://127.0.0.1:$P_HERD/$SERVE_FILE"
    RUN[herd-before-h1-close]="$BEFORE_PID h1-close http://127.0.0.1:$P_BEFORE/$SERVE_FILE"
    RUN[nginx-h1-close]="$NGINX_WORKER h1-close http://127.0.0.1:$P_NGINX_H1/$SERVE_FILE"
    NAMES+=(herd-before-h1 herd-h1-close herd-before-h1-close nginx-h1-close)
    if [[ $H1_ONLY != 1 ]]; then
        RUN[herd-before-h2c]="$BEFORE_PID h2c http://127.0.0.1:$P_BEFORE/$SERVE_FILE"
        NAMES+=(herd-before-h2c)
    fi
fi

# --- correctness ------------------------------------------------------------------------------------
for name in "${NAMES[@]}"; do
    read -r _ proto url <<<"${RUN[$name]}"
    if [[ $proto == h2c ]]; then
        got=$(curl -s --http2-prior-knowledge -o /dev/null -w '%{http_code} %{size_download} %{http_version}' "$url")
        [[ $got == "200 $SIZE 2" ]] || die "$name: $url answers $got"
        h2load -n 100 -c 1 "$url" | grep -q "Application protocol: h2c" || die "$name: h2load does not get h2c"
    else
        got=$(curl -s -o /dev/null -w '%{http_code} %{size_download} %{http_version}' "$url")
        [[ $got == "200 $SIZE 1.1" ]] || die "$name: $url answers $got"
    fi
done

{
    echo "date: $(date -Is)"
    echo "kernel: $(uname -srvm)"
    herd_versions "herd=$HERD" ${HERD_BEFORE:+"herd-before=$HERD_BEFORE"}
    echo "command: ROUNDS=$ROUNDS REQUESTS=$REQUESTS DURATION=$DURATION FILE=$SERVE_FILE${HERD_ENV:+ HERD_ENV=\"$HERD_ENV\"}${BEFORE_ENV:+ BEFORE_ENV=\"$BEFORE_ENV\"}${H1_ONLY:+ H1_ONLY=$H1_ONLY} bench/serve-h2.sh"
    echo "nginx: $(nginx -v 2>&1)"
    echo "h2load: $(h2load --version | head -1)"
    echo "wrk: $(wrk --version 2>&1 | head -1)"
    echo "file: $SERVE_FILE ($SIZE bytes); h2load -t1 -c4 -m10 -n $REQUESTS; wrk -t1 -c50 -d${DURATION}s"
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/versions.txt"

echo "round,name,protocol,requests,seconds,req_per_s,server_cpu_us_per_req" >"$OUT/runs.csv"
for round in $(seq "$ROUNDS"); do
    n=${#NAMES[@]}
    for k in $(seq 0 $((n - 1))); do
        name=${NAMES[$(((k + round) % n))]}
        read -r pid proto url <<<"${RUN[$name]}"
        raw=$OUT/raw/$round-$name.out
        before=$(cpu_ns "$pid")
        t0=$(date +%s.%N)
        if [[ $proto == h2c ]]; then
            taskset -c 1 h2load -t1 -c4 -m10 -n "$REQUESTS" "$url" >"$raw" 2>&1
            reqs=$(awk '/^requests:/ {print $8}' "$raw")
            rps=$(awk '/^finished in/ {print $4}' "$raw")
        else
            hdr=()
            [[ $proto == h1-close ]] && hdr=(-H "Connection: close")
            taskset -c 1 wrk -t1 -c50 -d"${DURATION}s" "${hdr[@]}" "$url" >"$raw" 2>&1
            reqs=$(awk '/requests in/ {print $1}' "$raw")
            rps=$(awk '/^Requests\/sec:/ {print $2}' "$raw")
        fi
        t1=$(date +%s.%N)
        after=$(cpu_ns "$pid")
        secs=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
        cpu=$(python3 -c "print(f'{($after - $before) / 1000 / $reqs:.2f}')")
        echo "$round,$name,$proto,$reqs,$secs,$rps,$cpu" >>"$OUT/runs.csv"
        log "round $round $name: $rps req/s, server $cpu µs/request"
        sleep 1
    done
done

python3 - "$OUT/runs.csv" >"$OUT/summary.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
names = []
for r in rows:
    if r["name"] not in names:
        names.append(r["name"])
print("| run | protocol | req/s (median, min-max) | server CPU µs/request (median, min-max) |")
print("|---|---|---|---|")
for n in names:
    rs = [r for r in rows if r["name"] == n]
    rps = [float(r["req_per_s"]) for r in rs]
    cpu = [float(r["server_cpu_us_per_req"]) for r in rs]
    print(f"| {n} | {rs[0]['protocol']} | {statistics.median(rps):,.0f} ({min(rps):,.0f}-{max(rps):,.0f}) "
          f"| {statistics.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f}) |")
EOF
cat "$OUT/summary.md"
log "results in $OUT"
