# shellcheck shell=bash disable=SC2034  # a library: its variables are used by the scripts that source it
# Shared set-up for the scripts of bench/ (sourced, not run).
# Provides: herd_versions (which herd was measured: every script's versions file),
# bench_setup [PORT], bench_cleanup, cg_setup, cg_cleanup, cg_usage_ns, cg_throttled, nginx_status,
# nginx_requests, nginx_worker_ns, caddy_setup (HTTP/3), gcannon_ensure and gcannon_version (issue
# 35's io_uring peer), the scenario and tool tables (build_cmd, parse_out, fits, counts_at_server,
# detect_tools), and the variables BENCH, PORT, H2C_PORT, H2_PORT, H3_PORT, NGINX_PID, NGINX_WORKER,
# CADDY_PID, CG_MODE, CG_CPU, CG_ACCT, FLOOR, OHA, GCANNON.
# Everything started here is stopped by its own PID; nothing else is touched.

BENCH_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_HERE")
FLOOR=$BENCH_HERE/floor
BENCH=
PORT=
H2C_PORT=      # nginx's h2c listener (HTTP/2 in the clear, prior knowledge)
H2_PORT=       # nginx's HTTP/2 over TLS listener (self-signed certificate made at setup)
H3_PORT=       # caddy's HTTPS port: HTTP/3 on UDP (only when an HTTP/3 tool is asked for)
CADDY_PID=
OHA=${OHA:-/tmp/oha/bin/oha}   # oha built with its http3 feature (cargo install oha --features http3)
GCANNON=${GCANNON:-}           # gcannon's binary; empty: built on first use (gcannon_ensure)
PEERS_DIR=${PEERS_DIR:-$ROOT/target/bench-peers}   # where gcannon_ensure builds and keeps it
NGINX_PID=
NGINX_WORKER=
CG_MODE=none   # v2 | v1 | none
CG_CPU=        # group directory that carries the quota
CG_ACCT=       # group directory with a precise CPU usage counter (may equal CG_CPU)
CG_CREATED=()

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# herd_versions [NAME=BINARY ...]: which herd a run measured, as lines for its versions file (every script
# of bench/ writes them; BENCHMARKS.md cites them). First the commit of the tree the script runs from
# ($ROOT, `git rev-parse --short HEAD`), with " + uncommitted changes" when crates/, Cargo.toml or
# Cargo.lock differ from it (or crates/ holds files git does not track); then, for each binary given,
# its path, `--version`, sha256 and modification time. A binary outside this tree's target/ (a frozen
# copy in /tmp, another worktree's build) need not come from that commit: its sha256 is what names it.
herd_versions() {
    local commit spec name bin where
    if commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
        if ! git -C "$ROOT" diff --quiet HEAD -- crates Cargo.toml Cargo.lock ||
           [[ -n $(git -C "$ROOT" ls-files --others --exclude-standard -- crates) ]]; then
            commit+=" + uncommitted changes"
        fi
    else
        commit="unknown ($ROOT is not a git work tree)"
    fi
    echo "herd commit: $commit"
    for spec in "$@"; do
        name=${spec%%=*} bin=${spec#*=}
        [[ -n $bin ]] || continue
        if [[ ! -f $bin ]]; then
            echo "$name binary: $bin (missing)"
            continue
        fi
        where="in this tree's target/"
        [[ $(realpath "$bin") == "$ROOT"/target/* ]] || where="outside this tree's target/: not necessarily built from the commit above"
        echo "$name binary: $bin ($("$bin" --version 2>&1 | head -1)), sha256 $(sha256sum "$bin" | cut -d' ' -f1)," \
            "modified $(date -u -r "$bin" '+%F %T UTC') ($where)"
    done
}

port_is_free() {
    python3 - "$1" <<'EOF'
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
EOF
}

pick_port() {
    # Never 80, 2024 or 8080 blindly: take the first port of 18080-18179 that can be bound
    # (and is not one of the ports given as arguments: those are already taken by this set-up).
    local p
    for p in $(seq 18080 18179); do
        [[ " $* " == *" $p "* ]] && continue
        if port_is_free "$p"; then echo "$p"; return 0; fi
    done
    echo "no free port in 18080-18179" >&2
    return 1
}

build_floor() {
    if [[ ! -x $FLOOR || $BENCH_HERE/floor.c -nt $FLOOR || $BENCH_HERE/floor_common.h -nt $FLOOR ]]; then
        gcc -O2 -Wall -Wextra -Werror -o "$FLOOR" "$BENCH_HERE/floor.c"
    fi
}

# floor-uring (bench/floor_uring.c, issue 35): floor's io_uring counterpart, linked against liburing 2.15 built
# once from the shared vendored copy (../shared/vendor/liburing-2.15.tar.gz beside the repository, or
# $URING_TARBALL) into $URING_PREFIX (Debian 12's liburing 2.3 lacks buffer rings and bundles).
# Tool names: floor-uring (its defaults), floor-uring-OPT[+OPT...] = floor-uring -o OPT[,OPT...]
# (e.g. floor-uring-once, floor-uring-bundle+buf=4096, floor-uring-fixed+skipsend; see floor_uring.c). -v: its
# counters (turns, CQEs per turn, ENOBUFS, re-arms) go to stderr.
FLOOR_URING=$BENCH_HERE/floor-uring
URING_PREFIX=${URING_PREFIX:-$ROOT/target/bench-peers/liburing-2.15}
build_floor_uring() {
    local tarball=${URING_TARBALL:-} d=$ROOT missing=() p work
    if [[ ! -f $URING_PREFIX/lib/liburing.a ]]; then
        while [[ -z $tarball && $d != / ]]; do
            d=$(dirname "$d")
            [[ -f $d/shared/vendor/liburing-2.15.tar.gz ]] && tarball=$d/shared/vendor/liburing-2.15.tar.gz
        done
        [[ -n $tarball ]] || { log "ERROR: floor-uring: no shared/vendor/liburing-2.15.tar.gz above $ROOT (set URING_TARBALL)"; return 1; }
        for p in gcc make; do command -v "$p" >/dev/null || missing+=("$p"); done
        [[ ${#missing[@]} == 0 ]] || { log "ERROR: floor-uring: cannot build liburing: ${missing[*]} missing (apt-get install -y ${missing[*]})"; return 1; }
        work=$(mktemp -d)
        log "building liburing 2.15 from $tarball into $URING_PREFIX (once)"
        if ! (tar -xzf "$tarball" -C "$work" && cd "$work/liburing-2.15" &&
              ./configure --prefix="$URING_PREFIX" --cc=gcc && make -C src -j"$(nproc)" && make -C src install) \
              >"$work/build.log" 2>&1; then
            log "ERROR: floor-uring: building liburing failed: $(tail -3 "$work/build.log" | tr '\n' ' ')"
            rm -rf "$work"
            return 1
        fi
        rm -rf "$work"
    fi
    if [[ ! -x $FLOOR_URING || $BENCH_HERE/floor_uring.c -nt $FLOOR_URING || $BENCH_HERE/floor_common.h -nt $FLOOR_URING || $URING_PREFIX/lib/liburing.a -nt $FLOOR_URING ]]; then
        gcc -O2 -Wall -Wextra -Werror -I"$URING_PREFIX/include" -o "$FLOOR_URING" "$BENCH_HERE/floor_uring.c" \
            "$URING_PREFIX/lib/liburing.a" || { log "ERROR: floor-uring: compiling floor_uring.c failed"; return 1; }
    fi
}

bench_setup() {
    local want_port=${1:-}
    build_floor
    BENCH=$(mktemp -d /tmp/herd-bench.XXXXXX)
    mkdir -p "$BENCH/www" "$BENCH/tmp"
    chmod 755 "$BENCH" "$BENCH/www"   # the nginx worker runs as an unprivileged user
    head -c 1 /dev/zero | tr '\0' 'x' >"$BENCH/www/f1.html"
    python3 -c 'import sys; sys.stdout.write(("0123456789abcdef" * 400)[:6397])' >"$BENCH/www/f6397.html"
    head -c 1048576 /dev/urandom >"$BENCH/www/f1m.bin"
    [[ $(stat -c %s "$BENCH/www/f1.html") == 1 && $(stat -c %s "$BENCH/www/f6397.html") == 6397 &&
       $(stat -c %s "$BENCH/www/f1m.bin") == 1048576 ]] || { echo "bad test files" >&2; return 1; }
    if [[ -n $want_port ]]; then
        case $want_port in 80|2024|8080) echo "refusing port $want_port" >&2; return 1 ;; esac
        port_is_free "$want_port" || { echo "port $want_port is in use" >&2; return 1; }
        PORT=$want_port
    else
        PORT=$(pick_port)
    fi
    H2C_PORT=$(pick_port "$PORT")
    H2_PORT=$(pick_port "$PORT" "$H2C_PORT")
    make_cert "$BENCH"
    sed -e "s|@BENCH@|$BENCH|g" -e "s|@PORT@|$PORT|g" -e "s|@H2C_PORT@|$H2C_PORT|g" -e "s|@H2_PORT@|$H2_PORT|g" -e "s|@RLIMIT@|${NGINX_RLIMIT:-20000}|g" \
        -e "s|@WCONN@|${NGINX_WCONN:-4096}|g" -e "s|@BACKLOG@|${NGINX_BACKLOG:-4096}|g" \
        "$BENCH_HERE/nginx.conf" >"$BENCH/nginx.conf"
    taskset -c 0 nginx -c "$BENCH/nginx.conf" -p "$BENCH/" -e "$BENCH/error.log"
    local i
    for i in $(seq 50); do [[ -s $BENCH/nginx.pid ]] && break; sleep 0.1; done
    NGINX_PID=$(cat "$BENCH/nginx.pid")
    for i in $(seq 50); do
        NGINX_WORKER=$(cat "/proc/$NGINX_PID/task/$NGINX_PID/children" 2>/dev/null | awk '{print $1}')
        [[ -n $NGINX_WORKER ]] && break
        sleep 0.1
    done
    [[ -n $NGINX_WORKER ]] || { echo "nginx worker not found" >&2; return 1; }
    nginx_status >/dev/null || { echo "nginx does not answer on 127.0.0.1:$PORT" >&2; return 1; }
    local f got
    for f in f1.html f6397.html f1m.bin; do
        chmod 644 "$BENCH/www/$f"
        got=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "http://127.0.0.1:$PORT/$f")
        [[ $got == "200 $(stat -c %s "$BENCH/www/$f")" ]] || { echo "nginx serves $f wrongly: $got" >&2; return 1; }
    done
    got=$(curl -s --http2-prior-knowledge -o /dev/null -w '%{http_version} %{http_code}' "http://127.0.0.1:$H2C_PORT/f1.html")
    [[ $got == "2 200" ]] || { echo "nginx does not speak h2c on $H2C_PORT: $got" >&2; return 1; }
    got=$(curl -s -k --http2 -o /dev/null -w '%{http_version} %{http_code}' "https://127.0.0.1:$H2_PORT/f1.html")
    [[ $got == "2 200" ]] || { echo "nginx does not speak h2 over TLS on $H2_PORT: $got" >&2; return 1; }
    log "nginx master $NGINX_PID worker $NGINX_WORKER (affinity $(taskset -pc "$NGINX_WORKER" | sed 's/.*: //')) on 127.0.0.1:$PORT (h2c $H2C_PORT, h2 $H2_PORT), files in $BENCH/www"
}

# A self-signed P-256 certificate for 127.0.0.1 and localhost in $1 (cert.pem, key.pem), for nginx and caddy.
make_cert() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
        -addext 'subjectAltName=IP:127.0.0.1,DNS:localhost' -keyout "$1/key.pem" -out "$1/cert.pem" 2>/dev/null ||
        { echo "openssl could not make a certificate (package openssl)" >&2; return 1; }
    chmod 644 "$1/cert.pem" "$1/key.pem"
}

# caddy (package caddy) serving $BENCH/www over HTTPS with HTTP/3 on UDP $H3_PORT, pinned to CPU 0 with
# GOMAXPROCS=1 (as nginx's one worker), admin API and HTTP->HTTPS redirects off. Needs $HERD for the readiness probe.
caddy_setup() {
    command -v caddy >/dev/null || { echo "caddy is not installed (package caddy)" >&2; return 1; }
    H3_PORT=$(pick_port "$PORT" "$H2C_PORT" "$H2_PORT")
    local http_port
    http_port=$(pick_port "$PORT" "$H2C_PORT" "$H2_PORT" "$H3_PORT")
    mkdir -p "$BENCH/caddy"
    printf '{\n\tadmin off\n\tauto_https disable_redirects\n\thttp_port %s\n\thttps_port %s\n}\n' "$http_port" "$H3_PORT" \
        >"$BENCH/Caddyfile"
    printf 'https://127.0.0.1:%s {\n\tbind 127.0.0.1\n\ttls %s %s\n\troot * %s\n\tfile_server\n}\n' \
        "$H3_PORT" "$BENCH/cert.pem" "$BENCH/key.pem" "$BENCH/www" >>"$BENCH/Caddyfile"
    HOME=$BENCH/caddy XDG_DATA_HOME=$BENCH/caddy XDG_CONFIG_HOME=$BENCH/caddy GOMAXPROCS=1 \
        taskset -c 0 caddy run --adapter caddyfile --config "$BENCH/Caddyfile" </dev/null >/dev/null 2>"$BENCH/caddy.log" &
    CADDY_PID=$!
    local i out
    for i in $(seq 100); do
        if out=$(timeout 10 "$HERD" run --h3 -k -n 1 -c 1 "https://127.0.0.1:$H3_PORT/f1.html" 2>&1) &&
           grep -q ' 1 completed, 0 failed' <<<"$out"; then
            log "caddy $CADDY_PID on 127.0.0.1:$H3_PORT (HTTP/3 on UDP), GOMAXPROCS=1, affinity $(taskset -pc "$CADDY_PID" | sed 's/.*: //')"
            return 0
        fi
        kill -0 "$CADDY_PID" 2>/dev/null || break
        sleep 0.2
    done
    echo "caddy does not answer HTTP/3 on 127.0.0.1:$H3_PORT: $(tail -3 "$BENCH/caddy.log" 2>/dev/null) $out" >&2
    return 1
}

caddy_stop() {
    if [[ -n $CADDY_PID ]] && kill -0 "$CADDY_PID" 2>/dev/null; then
        kill -TERM "$CADDY_PID" 2>/dev/null || true
        local i
        for i in $(seq 50); do kill -0 "$CADDY_PID" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$CADDY_PID" 2>/dev/null && kill -KILL "$CADDY_PID" 2>/dev/null
        log "caddy $CADDY_PID stopped"
    fi
    CADDY_PID=
}

nginx_stop() {
    if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -QUIT "$NGINX_PID" 2>/dev/null || true
        local i
        for i in $(seq 100); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$NGINX_PID" 2>/dev/null; then
            kill -TERM "$NGINX_PID" 2>/dev/null || true
            sleep 1
        fi
        # the worker exits with its master; make sure of it by its own PID
        if [[ -n $NGINX_WORKER ]] && kill -0 "$NGINX_WORKER" 2>/dev/null &&
           [[ $(cat "/proc/$NGINX_WORKER/comm" 2>/dev/null) == nginx ]]; then
            kill -TERM "$NGINX_WORKER" 2>/dev/null || true
        fi
        log "nginx $NGINX_PID stopped"
    fi
    NGINX_PID=
}

# "accepts requests" from stub_status (the query itself counts 1 accept + 1 request).
nginx_status() {
    local body
    exec 9<>"/dev/tcp/127.0.0.1/$PORT" || return 1
    printf 'GET /status HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&9
    body=$(cat <&9)
    exec 9<&-
    awk '/^ *[0-9]+ +[0-9]+ +[0-9]+/ {print $1, $3; found=1} END {exit !found}' <<<"$body"
}

# nginx's "requests" counter alone (stub_status; the query that reads it counts itself: a
# difference of two readings is one more than the requests between them).
nginx_requests() { local s; s=$(nginx_status) || return 1; echo "${s#* }"; }

nginx_worker_ns() { awk '{print $1}' "/proc/$NGINX_WORKER/schedstat"; }

# CPU time in ns of the server that tool $1 loads: caddy (all its threads, in clock ticks) for the
# HTTP/3 tools, else nginx's worker.
server_ns() {
    if [[ $1 == *-h3 && -n $CADDY_PID ]]; then
        awk -v hz="$(getconf CLK_TCK)" '{printf "%.0f\n", ($14 + $15) * 1000000000 / hz}' "/proc/$CADDY_PID/stat"
    else
        nginx_worker_ns
    fi
}

# CPU 1's jiffies from /proc/stat (user nice system idle iowait irq softirq steal ...)
cpu1_stat() { awk '$1 == "cpu1" {$1 = ""; print}' /proc/stat; }

# cgroup with a CPU quota for the client: cgroup v2 if the cpu controller is there, else v1.
# Its name carries this script's PID, so that two bench scripts at once each get their own group
# (with one shared name the second could not make it and ran without a quota, with a warning).
cg_setup() {
    local quota=$1 period=$2 name=herd-bench-$$
    if [[ -f /sys/fs/cgroup/cgroup.controllers ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
        if ! grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control; then
            echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
        fi
        if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control && mkdir "/sys/fs/cgroup/$name" 2>/dev/null; then
            CG_CREATED+=("/sys/fs/cgroup/$name")
            echo "$quota $period" >"/sys/fs/cgroup/$name/cpu.max"
            CG_MODE=v2 CG_CPU=/sys/fs/cgroup/$name CG_ACCT=/sys/fs/cgroup/$name
        fi
    fi
    if [[ $CG_MODE == none && -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]]; then
        # cgroup v1 (this machine: v2 is mounted at /sys/fs/cgroup/unified with no controllers,
        # the cpu controller is a v1 hierarchy at /sys/fs/cgroup/cpu)
        if mkdir "/sys/fs/cgroup/cpu/$name" 2>/dev/null; then
            CG_CREATED+=("/sys/fs/cgroup/cpu/$name")
            echo "$period" >"/sys/fs/cgroup/cpu/$name/cpu.cfs_period_us"
            echo "$quota" >"/sys/fs/cgroup/cpu/$name/cpu.cfs_quota_us"
            CG_MODE=v1 CG_CPU=/sys/fs/cgroup/cpu/$name
            if [[ -f /sys/fs/cgroup/cpu/$name/cpuacct.usage ]]; then
                CG_ACCT=$CG_CPU
            elif [[ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ]] && mkdir "/sys/fs/cgroup/cpuacct/$name" 2>/dev/null; then
                CG_CREATED+=("/sys/fs/cgroup/cpuacct/$name")
                CG_ACCT=/sys/fs/cgroup/cpuacct/$name
            fi
        fi
    fi
    if [[ $CG_MODE == none ]]; then
        log "WARNING: no usable cgroup CPU controller (v2 cpu.max or v1 cpu.cfs_quota_us): the client runs WITHOUT a CPU quota;"
        log "WARNING: req/s is then server-bound and only CPU time per request (/usr/bin/time) measures the client"
    else
        log "cgroup $CG_MODE: $CG_CPU quota $quota/$period us; precise CPU counter: ${CG_ACCT:-none}"
    fi
}

cg_cleanup() {
    local d i
    for d in "${CG_CREATED[@]}"; do
        for i in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
        [[ -d $d ]] && log "WARNING: could not remove $d"
    done
    CG_CREATED=()
}

# Precise CPU usage of the group in ns (empty when unavailable).
cg_usage_ns() {
    if [[ -z $CG_ACCT ]]; then echo ""; return; fi
    if [[ $CG_MODE == v2 ]]; then
        awk '$1 == "usage_usec" {print $2 * 1000}' "$CG_ACCT/cpu.stat"
    else
        cat "$CG_ACCT/cpuacct.usage"
    fi
}

cg_throttled() {
    if [[ -z $CG_CPU ]]; then echo ""; return; fi
    awk '$1 == "nr_throttled" {print $2}' "$CG_CPU/cpu.stat"
}

bench_cleanup() {
    caddy_stop
    nginx_stop
    cg_cleanup
    if [[ -n $BENCH && -d $BENCH && $BENCH == /tmp/herd-bench.* ]]; then
        rm -rf "$BENCH"
    fi
}

# --- scenarios and client command lines (shared by run.sh and profile.sh) -------------------
# Callers set: PORT, HERD, SCALE_DIV (divides the request counts), WRK_S (wrk's duration), CONC.
CONC=100
# requests per run, sized so that the floor takes ~4 s under a 25 % quota (wrk runs WRK_S seconds)
declare -A NREQ=([ka-6397-c100]=150000 [ka-1MiB-c100]=6000 [close-6397-c100]=30000 [ka-1B-c100]=150000)
declare -A FILE=([ka-6397-c100]=f6397.html [ka-1MiB-c100]=f1m.bin [close-6397-c100]=f6397.html [ka-1B-c100]=f1.html)
declare -A KA=([ka-6397-c100]=1 [ka-1MiB-c100]=1 [close-6397-c100]=0 [ka-1B-c100]=1)
# Multiplexed scenarios (issue 19): mux-<file>-c<connections>-m<streams per connection>, for the tools
# herd-h2c/h2load-h2c (nginx h2c), herd-h2/h2load-h2 (nginx h2 over TLS) and herd-h3/oha-h3 (caddy, HTTP/3).
# SCONC and STREAMS override CONC and set -m; HTTP/3 tools run NREQ / H3_DIV requests (QUIC costs ~2-3x more).
declare -A SCONC=() STREAMS=()
for _c in 10 100; do
    for _m in 1 10; do
        NREQ[mux-6397-c$_c-m$_m]=$((_m == 1 ? 60000 : 100000)); FILE[mux-6397-c$_c-m$_m]=f6397.html
        NREQ[mux-1B-c$_c-m$_m]=$((_m == 1 ? 60000 : 100000)); FILE[mux-1B-c$_c-m$_m]=f1.html
        KA[mux-6397-c$_c-m$_m]=1 KA[mux-1B-c$_c-m$_m]=1
        SCONC[mux-6397-c$_c-m$_m]=$_c SCONC[mux-1B-c$_c-m$_m]=$_c
        STREAMS[mux-6397-c$_c-m$_m]=$_m STREAMS[mux-1B-c$_c-m$_m]=$_m
    done
done
unset _c _m
H3_DIV=${H3_DIV:-3}
# Pipelined scenarios (issue 35): keep-alive, DEPTH requests written at once on each connection.
# Only the tools whose name ends in -p<DEPTH> run them (herd-run-p16: herd run --pipeline 16;
# gcannon-p16: gcannon -p 16), and those tools run nothing else (see fits). NREQ: ~4-6 s at the
# rate pipelining reaches under the quota (~3x keep-alive's).
declare -A DEPTH=()
NREQ[ka-6397-c100-p16]=450000 FILE[ka-6397-c100-p16]=f6397.html
NREQ[ka-1B-c100-p16]=450000 FILE[ka-1B-c100-p16]=f1.html
KA[ka-6397-c100-p16]=1 DEPTH[ka-6397-c100-p16]=16 KA[ka-1B-c100-p16]=1 DEPTH[ka-1B-c100-p16]=16

# The pipeline depth tool $1 writes: the N of a -pN suffix, else 1 (one request in flight per
# connection).
tool_depth() {
    if [[ $1 =~ -p([0-9]+)$ ]]; then echo "${BASH_REMATCH[1]}"; else echo 1; fi
}

# True when tool $1 runs scenario $2 as the scenario means it: the same pipeline depth, and
# gcannon only with keep-alive (its -r closes each connection itself, with an RST, rather than
# ask with Connection: close). Scripts that loop over tools and scenarios skip the pairs that do
# not fit; build_cmd refuses them.
fits() {
    local tool=$1 scen=$2
    [[ $(tool_depth "$tool") == "${DEPTH[$scen]:-1}" ]] || return 1
    [[ $tool == gcannon* && ${KA[$scen]} != 1 ]] && return 1
    return 0
}

# True when tool $1's own request count leaves out requests it made, so that a script takes
# nginx's count (nginx_requests before and after the run) as its requests: gcannon zeroes its
# counters 100 ms after its start (its warm-up), and its CPU time covers those requests too.
counts_at_server() { [[ $1 == gcannon* ]]; }

# "REQ TREQ FAIL" of one run of TOOL: TREQ and FAIL as the tool reported them (parse_out), REQ the
# requests the run is charged with: TREQ, or for a tool counted at the server, nginx's count
# between N0 and N1 (less the count request itself; 0 when either count is missing).
run_requests() {
    local tool=$1 out=$2 n0=$3 n1=$4 treq fail req
    read -r treq fail < <(parse_out "$tool" "$out") || { treq=0 fail=; }
    req=$treq
    if counts_at_server "$tool"; then
        req=0
        [[ -n $n0 && -n $n1 ]] && req=$((n1 - n0 - 1))
    fi
    echo "$req $treq $fail"
}

# The build-peers.sh of the shared folder beside the repository (../shared/tools/, or
# ../../shared/tools/ from a worktree one level deeper), or $BUILD_PEERS.
find_build_peers() {
    local d=$ROOT
    if [[ -n ${BUILD_PEERS:-} ]]; then echo "$BUILD_PEERS"; return 0; fi
    while [[ $d != / ]]; do
        d=$(dirname "$d")
        if [[ -x $d/shared/tools/build-peers.sh ]]; then echo "$d/shared/tools/build-peers.sh"; return 0; fi
    done
    return 1
}

# Sets GCANNON: $GCANNON if given, else the build of the shared vendored copy kept in
# $PEERS_DIR/gcannon-<commit>/, made on first use with build-peers.sh (about 40 s: liburing 2.15,
# then gcannon).
gcannon_ensure() {
    if [[ -n $GCANNON ]]; then
        [[ -x $GCANNON ]] && return 0
        log "ERROR: GCANNON=$GCANNON is not an executable"
        return 1
    fi
    local bp tarball ver dest missing=() p
    if ! bp=$(find_build_peers); then
        log "ERROR: gcannon: no shared/tools/build-peers.sh above $ROOT" \
            "(set BUILD_PEERS=path, or GCANNON=binary)"
        return 1
    fi
    tarball=$(find "$(dirname "$bp")/../vendor" -maxdepth 1 -name 'gcannon-*.tar.gz' |
        sort | tail -1)
    [[ -n $tarball ]] || { log "ERROR: gcannon: no vendor/gcannon-*.tar.gz beside $bp"; return 1; }
    ver=$(basename "$tarball" .tar.gz)
    dest=$PEERS_DIR/$ver
    if [[ ! -x $dest/bin/gcannon ]]; then
        for p in gcc make; do command -v "$p" >/dev/null || missing+=("$p"); done
        if [[ ${#missing[@]} -gt 0 ]]; then
            log "ERROR: cannot build gcannon: ${missing[*]} missing" \
                "(apt-get install -y ${missing[*]})"
            return 1
        fi
        mkdir -p "$PEERS_DIR"
        log "building $ver with $bp into $dest (once; log: $dest.build.log)"
        if ! "$bp" "$dest" gcannon >"$dest.build.log" 2>&1 || [[ ! -x $dest/bin/gcannon ]]; then
            log "ERROR: building gcannon failed (needs gcc and make; see $dest.build.log):" \
                "$(tail -3 "$dest.build.log" | tr '\n' ' ')"
            return 1
        fi
    fi
    GCANNON=$dest/bin/gcannon
}

# One line for a versions file: which gcannon ran (gcannon_ensure's build says its line in
# PEERS_DIR/gcannon-<commit>.build.log; a GCANNON given by hand is "built elsewhere").
gcannon_version() {
    local info="" log_
    log_=$(dirname "$(dirname "$GCANNON")").build.log
    [[ -f $log_ ]] && info=$(grep -h '^gcannon' "$log_" | head -1)
    if [[ -n $info ]]; then info="${info%%:*}, by build-peers.sh"; else info="built elsewhere"; fi
    echo "gcannon: $GCANNON ($info), sha256 $(sha256sum "$GCANNON" | cut -d' ' -f1)"
}

# Builds CMD for tool $1 in scenario $2, and sets PIN (1: run it with taskset -c 1).
# herd-default is herd as a user runs it: default threads (one per core: 2), not pinned.
# Refuses (returns 1, CMD empty) a tool that does not fit the scenario (see fits).
build_cmd() {
    PIN=1
    CMD=()
    if ! fits "$1" "$2"; then
        log "ERROR: tool $1 (pipeline depth $(tool_depth "$1")) does not run scenario $2" \
            "(depth ${DEPTH[$2]:-1}, keep-alive ${KA[$2]})"
        return 1
    fi
    [[ $1 == herd-default ]] && PIN=0
    # herd's tools with -uring in their name (herd-uring, herd-run-uring, herd-run-uring-p16,
    # herd-h2c-uring, herd-h2-uring, herd-h3-uring, herd-https-uring, herd-base-uring): the same command on the io_uring backend (--io uring,
    # before the URL).
    # herd run's tools with -trace in their name (herd-run-trace, herd-h2c-trace,
    # herd-h3-trace, herd-run-trace-p16): the same with --trace-context (a traceparent on every
    # request), before the URL, to measure what it costs.
    local io=() trace=()
    [[ $1 == herd*-trace* ]] && trace=(--trace-context)
    local tool=${1/-uring/}
    tool=${tool/-trace/}
    local scen=$2 n=$((NREQ[$2] / SCALE_DIV)) url="http://127.0.0.1:$PORT/${FILE[$2]}" ka=${KA[$2]}
    [[ $1 == herd*-uring* ]] && io=(--io uring)
    local kflag=() close_hdr=() c=${SCONC[$2]:-$CONC} m=${STREAMS[$2]:-1}
    local h2c_url="http://127.0.0.1:$H2C_PORT/${FILE[$2]}" h2_url="https://127.0.0.1:$H2_PORT/${FILE[$2]}"
    local h3_url="https://127.0.0.1:$H3_PORT/${FILE[$2]}" n3=$((NREQ[$2] / SCALE_DIV / H3_DIV))
    [[ $ka == 1 ]] && kflag=(-k)
    [[ $ka == 0 ]] && close_hdr=(-H 'Connection: close')
    case $tool in
        floor) CMD=("$FLOOR" -c "$CONC" -n "$n" -k "$ka" 127.0.0.1 "$PORT" "/${FILE[$scen]}") ;;
        floor-uring | floor-uring-*)
            local uopts=${tool#floor-uring}
            uopts=${uopts#-}
            CMD=("$FLOOR_URING" -v -c "$CONC" -n "$n" -k "$ka" -o "${uopts//+/,}" 127.0.0.1 "$PORT" "/${FILE[$scen]}") ;;
        wrk) CMD=(wrk -t1 -c"$CONC" -d"${WRK_S}s" "${close_hdr[@]}" "$url") ;;
        ab) CMD=(ab -q -n "$n" -c "$CONC" "${kflag[@]}" "$url") ;;
        herd) CMD=("$HERD" ab -q -n "$n" -c "$CONC" "${kflag[@]}" --threads 1 "$url") ;;
        herd-default) CMD=("$HERD" ab -q -n "$n" -c "$CONC" "${kflag[@]}" "$url") ;;
        herd-base) CMD=("$HERD_BASE" ab -q -n "$n" -c "$CONC" "${kflag[@]}" --threads 1 "$url") ;;
        # HTTP/1.1 over TLS (nginx's TLS listener, which speaks HTTP/1.1 to a client that does
        # not ask for h2 by ALPN): the same scenarios, https
        herd-https) CMD=("$HERD" ab -q -n "$n" -c "$CONC" "${kflag[@]}" --threads 1 "https://127.0.0.1:$H2_PORT/${FILE[$scen]}") ;;
        ab-https) CMD=(ab -q -n "$n" -c "$CONC" "${kflag[@]}" "https://127.0.0.1:$H2_PORT/${FILE[$scen]}") ;;
        herd-run | herd-run-base)
            local nka=() bin=$HERD
            [[ $ka == 0 ]] && nka=(--no-keep-alive)
            [[ $tool == herd-run-base ]] && bin=$HERD_BASE
            CMD=("$bin" run -c "$CONC" -t 1 -n "$n" "${nka[@]}" "$url") ;;
        herd-run-p* | herd-run-base-p*)
            local bin=$HERD
            [[ $tool == herd-run-base-p* ]] && bin=$HERD_BASE
            CMD=("$bin" run -c "$CONC" -t 1 -n "$n" --pipeline "$(tool_depth "$tool")" "$url") ;;
        # gcannon runs for a duration (WRK_S), one thread; HOME: its run history (~/.gcannon)
        # goes to $BENCH
        gcannon | gcannon-p*)
            CMD=(env HOME="$BENCH" "$GCANNON" "$url" -c "$CONC" -t 1 -d "$WRK_S"
                 -p "$(tool_depth "$tool")") ;;
        h2load) CMD=(h2load --h1 -t1 -c"$CONC" -n "$n" "${close_hdr[@]}" "$url") ;;
        herd-h2c) CMD=("$HERD" run --h2c -t 1 -c "$c" -m "$m" -n "$n" "$h2c_url") ;;
        herd-h2c-base) CMD=("$HERD_BASE" run --h2c -t 1 -c "$c" -m "$m" -n "$n" "$h2c_url") ;;
        h2load-h2c) CMD=(h2load -t1 -c"$c" -m"$m" -n "$n" "$h2c_url") ;;
        herd-h2) CMD=("$HERD" run --h2 -k -t 1 -c "$c" -m "$m" -n "$n" "$h2_url") ;;
        h2load-h2) CMD=(h2load -t1 -c"$c" -m"$m" -n "$n" "$h2_url") ;;
        herd-h3) CMD=("$HERD" run --h3 -k -t 1 -c "$c" -m "$m" -n "$n3" "$h3_url") ;;
        herd-h3-base) CMD=("$HERD_BASE" run --h3 -k -t 1 -c "$c" -m "$m" -n "$n3" "$h3_url") ;;
        # oha: -c connections, -p parallel requests on each (its HTTP/2 and HTTP/3 streams)
        oha-h3) CMD=("$OHA" --no-tui --output-format json --http-version 3 --insecure -c "$c" -p "$m" -n "$n3" "$h3_url") ;;
    esac
    if ((${#io[@]})); then
        CMD=("${CMD[@]:0:${#CMD[@]}-1}" "${io[@]}" "${CMD[-1]}")
    fi
    if ((${#trace[@]})); then
        CMD=("${CMD[@]:0:${#CMD[@]}-1}" "${trace[@]}" "${CMD[-1]}")
    fi
}

# Prints "requests failed" from a tool's output.
parse_out() {
    local tool=${1/-uring/} out=$2
    tool=${tool/-trace/}
    [[ $1 == floor-uring* ]] && tool=$1
    case $tool in
        floor | floor-uring | floor-uring-*) sed -n 's/.*requests=\([0-9]*\).*non2xx=\([0-9]*\).*/\1 \2/p' "$out" | tail -1 ;;
        wrk) awk '/ requests in / {r=$1} /Non-2xx or 3xx responses:/ {f+=$NF}
                  /Socket errors:/ {gsub(/,/, ""); f+=$4+$6+$8+$10} END {print r+0, f+0}' "$out" ;;
        ab | ab-https | herd | herd-https | herd-default | herd-base) awk -F: '/^Complete requests:/ {r=$2+0} /^Failed requests:/ {f+=$2+0}
                  /^Non-2xx responses:/ {f+=$2+0} END {print r+0, f+0}' "$out" ;;
        herd-run | herd-run-base | herd-run-p* | herd-run-base-p* | herd-h2c | herd-h2c-base | herd-h2 | herd-h3 | herd-h3-base) sed -n 's/.* \([0-9]*\) completed, \([0-9]*\) failed.*/\1 \2/p' "$out" | tail -1 ;;
        h2load | h2load-h2c | h2load-h2) sed -n 's/^requests: .* \([0-9]*\) done, [0-9]* succeeded, \([0-9]*\) failed, \([0-9]*\) errored, \([0-9]*\) timeout.*/\1 \2 \3 \4/p' "$out" |
                  awk '{print $1, $2+$3+$4}' ;;
        # gcannon: "N requests in S s, M responses" (counted from 100 ms after its start);
        # failed = responses that were not 2xx + the larger of its reconnects and its errors
        # (connect, read, timeout): a failed connect or send counts as both, and a reconnect alone
        # (EOF) drops what was in flight uncounted. With nginx's keepalive_requests of 100000000
        # there should be none.
        gcannon | gcannon-p*) awk '/ requests in .* responses$/ {r=$(NF-1)}
                  /Status codes:/ {for (i = 3; i <= NF; i++) if ($i ~ /^(3xx|4xx|5xx|other)=/)
                                       {split($i, kv, "="); f += kv[2] + 0}}
                  /^ *Reconnects:/ {rc=$2}
                  /^ *Errors:/ {gsub(/,/, ""); e=$3+$5+$7}
                  END {print r+0, f + (rc > e ? rc : e)}' "$out" ;;
        # oha's JSON: responses by status, errors by kind; failed = non-2xx responses + errors
        oha-h3) python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
st = {int(k): v for k, v in d.get("statusCodeDistribution", {}).items()}
err = sum(d.get("errorDistribution", {}).values())
print(sum(st.values()), sum(v for k, v in st.items() if not 200 <= k < 300) + err)' "$out" ;;
    esac
}


# True when binary $1's `herd ab` completes a small run against the nginx on $PORT.
herd_works() {
    local bin=$1 out
    if [[ ! -x $bin ]]; then
        log "WARNING: no herd binary at $bin (build it: cargo build --profile dist -p herd)"
        return 1
    fi
    if out=$(timeout 20 "$bin" ab -q -n 20 -c 2 -k "http://127.0.0.1:$PORT/f1.html" 2>&1) &&
       grep -Eq '^Complete requests: +20$' <<<"$out"; then
        return 0
    fi
    log "WARNING: $bin ab does not work: $(tail -3 <<<"$out" | tr '\n' ' ')"
    return 1
}

# Sets herd_ok and active=(usable tools from $TOOLS). Needs nginx running.
# herd-base is a second herd binary, $HERD_BASE (a frozen "before" build), run as herd is.
detect_tools() {
    local t base_ok=0
    herd_ok=0
    herd_works "$HERD" && herd_ok=1
    if [[ " $TOOLS " == *" herd-base "* || " $TOOLS " == *" herd-run-base"* || " $TOOLS " == *" herd-base-uring "* || " $TOOLS " == *" herd-h2c-base "* || " $TOOLS " == *" herd-h3-base "* ]] && herd_works "${HERD_BASE:-}"; then base_ok=1; fi
    active=()
    for t in $TOOLS; do
        case $t in
            floor) active+=(floor) ;;
            floor-uring | floor-uring-*) if build_floor_uring; then active+=("$t"); else log "WARNING: $t skipped (above)"; fi ;;
            ab-https) if command -v ab >/dev/null; then active+=("$t"); else log "WARNING: ab not installed, $t skipped"; fi ;;
            wrk | ab | h2load) if command -v "$t" >/dev/null; then active+=("$t"); else log "WARNING: $t not installed, skipped"; fi ;;
            h2load-h2c | h2load-h2) if command -v h2load >/dev/null; then active+=("$t"); else log "WARNING: h2load not installed (package nghttp2-client), $t skipped"; fi ;;
            oha-h3) if [[ -x $OHA ]]; then active+=("$t"); else log "WARNING: no oha at $OHA (cargo install oha --locked --features http3 --root /tmp/oha), $t skipped"; fi ;;
            gcannon | gcannon-p[0-9]*)
                if gcannon_ensure; then active+=("$t"); else log "WARNING: $t skipped (above)"; fi ;;
            herd | herd-default | herd-run | herd-run-p[0-9]* | herd-h2c | herd-h2 | herd-h3 | \
                herd-uring | herd-run-uring | herd-run-uring-p[0-9]* | herd-h2c-uring | herd-h2-uring | \
                herd-h3-uring | herd-https | herd-https-uring | herd-run-trace | herd-run-trace-p[0-9]* | \
                herd-h2c-trace | herd-h3-trace)
                if [[ $herd_ok == 1 ]]; then active+=("$t"); fi ;;
            herd-base | herd-run-base | herd-run-base-p[0-9]* | herd-h2c-base | herd-h3-base | \
                herd-base-uring | herd-run-base-uring)
                if [[ $base_ok == 1 ]]; then active+=("$t"); fi ;;
            *) log "unknown tool $t"; exit 64 ;;
        esac
    done
}
