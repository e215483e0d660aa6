#!/usr/bin/env bash
# herd serve against real servers (nginx, lighttpd, PHP behind nginx and Apache), wrk as the client.
#
# usage: bench/serve.sh
# env:   QUICK=1          smoke run: 1 round of 2 s runs (about 1 min) instead of ROUNDS rounds of 5 s runs
#        ROUNDS=N         rounds (default 5; QUICK: 1)
#        DURATION=S       seconds per wrk run (default 5; QUICK: 2)
#        CONNECTIONS=50   wrk connections (wrk -t1 -cCONNECTIONS)
#        HERD=path        the herd binary (default: target/dist/herd)
#        FPM_CHILDREN=4   php-fpm children (pm = static), all on CPU 0
#        APACHE=auto      1: PHP behind Apache too (needs apache2), 0: skip, auto: if apache2 is installed
#        SCENARIOS="ka-6397 close-6397 9x9"
#        PAUSE_S=1        pause between runs
#        PROFILE=1        instead of the rounds: one run per server under perf stat (syscalls, task-clock and
#                         context switches per request) -> serve-profile.md; needs perf (linux-perf)
#        PERF_RECORD=1    with PROFILE=1: one more run per server (not PHP) under perf record -g
#
# Set-up (see bench/results/2026-11-21-serve-against-nginx-lighttpd-php.md): every server runs pinned to
# CPU 0 (taskset -c 0), one process or worker each; wrk runs pinned to CPU 1 (taskset -c 1 wrk -t1).
# The servers: herd serve --threads 1; nginx (bench/serve/nginx.conf, 1 worker; a second port of the
# same worker has open_file_cache on); lighttpd (bench/serve/lighttpd.conf); php-fpm
# (bench/serve/php-fpm.conf, pm = static) behind that nginx and behind Apache (bench/serve/apache2.conf).
# Scenarios:
#   ka-6397     GET /f6397.html (6397 bytes), keep-alive:          herd, nginx, nginx-ofc, lighttpd
#   close-6397  the same with 'Connection: close' (a new connection per request): the same servers, and
#               nginx with 'listen ... deferred' (TCP_DEFER_ACCEPT, which herd serve always sets)
#   9x9         herd's computed /9x9 (1692 bytes), herd serving the same bytes as a static file,
#               and crates/drivers/src/php/9x9.php through php-fpm behind nginx and behind Apache (keep-alive)
# Rounds: each round runs every server once per scenario, the order rotated by one each round.
# Before any timing, every URL is checked (status 200, length; the 9x9 pages byte for byte against
# crates/serve/tests/golden/9x9.html), and the script stops if a server does not answer.
# Per run: wrk's req/s, the server's CPU time per request (/proc/PID/task/*/schedstat of the server's
# processes: the herd process, the nginx worker, lighttpd, plus the php-fpm pool and the Apache
# processes for PHP), wrk's own CPU (/usr/bin/time) and CPU 0/1 busy time (/proc/stat).
# Output: bench/results/<stamp>-serve/ (serve-runs.csv, serve-summary.csv, serve-summary.md,
# serve-versions.txt, conf/ the configurations as run, heads/ each server's response head; raw/ holds
# wrk's outputs and the servers' logs and is not committed); -serve-quick/ with QUICK=1,
# -serve-profile/ (serve-profile.md) with PROFILE=1.
# Everything started here is stopped by its own PID on exit, Ctrl-C or error.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"   # log, port_is_free, nginx_stop (NGINX_PID, NGINX_WORKER)

SERVE_DIR=$BENCH_HERE/serve
GOLDEN=$ROOT/crates/serve/tests/golden/9x9.html
QUICK=${QUICK:-0}
if [[ $QUICK == 1 ]]; then
    ROUNDS=${ROUNDS:-1}; DURATION=${DURATION:-2}
else
    ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-5}
fi
CONNECTIONS=${CONNECTIONS:-50}
HERD=${HERD:-$ROOT/target/dist/herd}
FPM_CHILDREN=${FPM_CHILDREN:-4}
APACHE=${APACHE:-auto}
SCENARIOS=${SCENARIOS:-ka-6397 close-6397 9x9}
PAUSE_S=${PAUSE_S:-1}
FPM_BIN=${FPM_BIN:-$(command -v php-fpm8.2 || command -v php-fpm || true)}

if [[ $APACHE == auto ]]; then
    if command -v apache2 >/dev/null; then APACHE=1; else APACHE=0; fi
fi

die() { log "FATAL: $*"; exit 1; }

for tool in wrk nginx lighttpd curl python3 taskset timeout; do
    command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install -y ${tool/nginx/nginx-light})"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install -y time)"
[[ -n $FPM_BIN ]] || die "php-fpm is not installed (apt-get install -y php-fpm)"
[[ -x $HERD ]] || die "no herd binary at $HERD (cargo build --profile dist -p herd, or HERD=path)"
[[ -f $GOLDEN && $(stat -c %s "$GOLDEN") == 1692 ]] || die "$GOLDEN missing or not 1692 bytes"
[[ $(nproc) -ge 2 ]] || die "needs 2 CPUs (server on CPU 0, wrk on CPU 1)"

STAMP=$(date +%Y-%m-%d-%H%M%S)
SUFFIX=serve
if [[ ${PROFILE:-0} == 1 ]]; then SUFFIX=serve-profile; elif [[ $QUICK == 1 ]]; then SUFFIX=serve-quick; fi
RES=$BENCH_HERE/results/$STAMP-$SUFFIX
mkdir -p "$RES/raw" "$RES/conf" "$RES/heads"
CSV=$RES/serve-runs.csv

WORK=
HERD_PID=""
LIGHTTPD_PID=""
FPM_PID=""
APACHE_PID=""
FPM_KIDS=() APACHE_KIDS=()
CUR_PID=

# --- stopping: only our own PIDs -------------------------------------------------------------
# stop_pid NAME PID SIGNAL COMM: signal PID if it is still ours (its comm is COMM), wait up to 10 s, then KILL.
stop_pid() {
    local name=$1 pid=$2 sig=$3 comm=$4 i
    [[ -n $pid ]] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm"* ]] || { log "WARNING: PID $pid is no longer $name; not touched"; return 0; }
    kill "-$sig" "$pid" 2>/dev/null || true
    for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm"* ]]; then
        log "WARNING: $name ($pid) still alive after SIG$sig; SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    log "$name $pid stopped"
}

cleanup() {
    local rc=$? p
    trap - EXIT INT TERM
    # a wrk run still going (interrupted): its timeout process signals its own process group
    if [[ -n $CUR_PID ]] && kill -0 "$CUR_PID" 2>/dev/null; then
        kill -TERM "$CUR_PID" 2>/dev/null || true
        wait "$CUR_PID" 2>/dev/null || true
    fi
    stop_pid "herd serve" "$HERD_PID" TERM herd
    nginx_stop
    stop_pid lighttpd "$LIGHTTPD_PID" TERM lighttpd
    stop_pid apache2 "$APACHE_PID" TERM apache2
    stop_pid php-fpm "$FPM_PID" QUIT php-fpm
    # children exit with their masters; make sure of it, by their own PIDs
    for p in "${APACHE_KIDS[@]}"; do stop_pid "apache2 child" "$p" TERM apache2; done
    for p in "${FPM_KIDS[@]}"; do stop_pid "php-fpm child" "$p" TERM php-fpm; done
    if [[ -n $WORK && -d $WORK && $WORK == /tmp/herd-serve-bench.* ]]; then
        for p in nginx-error.log lighttpd-error.log php-fpm.log apache2-error.log herd.err herd.out fpm.out apache2.out lighttpd.out; do
            [[ -s $WORK/$p ]] && cp "$WORK/$p" "$RES/raw/" 2>/dev/null
        done
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ulimit -n "$(ulimit -Hn)"

# --- helpers ------------------------------------------------------------------------------------
# pick_ports N: prints N distinct free ports of 18080-18179 (never 2024, 8080 or 80: not in the range)
pick_ports() {
    local want=$1 p got=()
    for p in $(seq 18080 18179); do
        if port_is_free "$p"; then got+=("$p"); fi
        [[ ${#got[@]} == "$want" ]] && { echo "${got[*]}"; return 0; }
    done
    die "not $want free ports in 18080-18179"
}

# children PIDs of PID (all its threads' children)
children_of() { cat "/proc/$1/task/"*/children 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+$' || true; }

# fill_template SRC DST [PORT PORT_OFC PORT_DEF]: replaces @BENCH@ @PORT@ @PORT_OFC@ @PORT_DEF@ @FPM_SOCK@ @CHILDREN@
fill_template() {
    sed -e "s|@BENCH@|$WORK|g" -e "s|@PORT@|${3:-}|g" -e "s|@PORT_OFC@|${4:-}|g" -e "s|@PORT_DEF@|${5:-}|g" \
        -e "s|@FPM_SOCK@|$WORK/php-fpm.sock|g" -e "s|@CHILDREN@|$FPM_CHILDREN|g" "$1" >"$2"
    cp "$2" "$RES/conf/"
}

# wait_http NAME URL [PID]: up to 10 s for a 200; fails loudly if PID dies or nothing answers.
wait_http() {
    local name=$1 url=$2 pid=${3:-} i code
    for i in $(seq 100); do
        if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then die "$name (PID $pid) exited at start; see $RES/raw/ and $WORK"; fi
        code=$(curl -s -o /dev/null --max-time 2 -w '%{http_code}' "$url" || true)
        [[ $code == 200 ]] && return 0
        sleep 0.1
    done
    die "$name does not answer 200 on $url after 10 s (last status: ${code:-none})"
}

# check_url LABEL URL SIZE [GOLDEN] [close]: status 200, body length SIZE, bytes equal to GOLDEN if given.
check_url() {
    local label=$1 url=$2 size=$3 golden=${4:-} close=${5:-} got code len head hdr=()
    [[ $close == close ]] && hdr=(-H 'Connection: close')
    got=$(curl -sS --max-time 5 "${hdr[@]}" -o "$WORK/check.body" -D "$RES/heads/$label${close:+-close}.txt" \
        -w '%{http_code} %{size_download} %{size_header}' "$url") || die "$label: curl $url failed"
    read -r code len head <<<"$got"
    [[ $code == 200 && $len == "$size" ]] || die "$label: $url answered status $code with $len bytes, expected 200 and $size"
    if [[ -n $golden ]] && ! cmp -s "$WORK/check.body" "$golden"; then
        cmp "$WORK/check.body" "$golden" >&2 || true
        die "$label: the body of $url is not byte-identical to $golden"
    fi
    if [[ $close == close ]] && ! grep -qi '^connection: *close' "$RES/heads/$label-close.txt"; then
        die "$label: $url with 'Connection: close' did not answer 'Connection: close'"
    fi
    log "check $label${close:+ (close)}: $url -> 200, $len body bytes$([[ -n $golden ]] && echo ', identical to the golden'), $head head bytes"
}

# --- the files --------------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/herd-serve-bench.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK/www" "$WORK/php" "$WORK/tmp" "$WORK/apache"
python3 -c 'import sys; sys.stdout.write(("0123456789abcdef" * 400)[:6397])' >"$WORK/www/f6397.html"
cp "$GOLDEN" "$WORK/www/9x9.html"
cp "$SERVE_DIR/../../crates/drivers/src/php/9x9.php" "$WORK/php/9x9.php"  # the lab's page, one copy
cat >"$WORK/php/opcache.php" <<'EOF'
<?php
$s = function_exists('opcache_get_status') ? opcache_get_status(false) : false;
echo ($s && $s['opcache_enabled']) ? "opcache on" : "opcache off";
if ($s) { echo " hits=", $s['opcache_statistics']['hits'], " misses=", $s['opcache_statistics']['misses'],
               " cached_scripts=", $s['opcache_statistics']['num_cached_scripts']; }
echo " jit_buffer_size=", ini_get('opcache.jit_buffer_size'), " validate_timestamps=", ini_get('opcache.validate_timestamps'), "\n";
EOF
chmod 644 "$WORK"/www/* "$WORK"/php/*
chmod 755 "$WORK/www" "$WORK/php"
[[ $(stat -c %s "$WORK/www/f6397.html") == 6397 ]] || die "bad f6397.html"

read -r P_HERD P_NGINX P_OFC P_LIGHTTPD P_APACHE P_DEF <<<"$(pick_ports 6)"
if [[ $APACHE != 1 ]]; then P_APACHE=""; fi

# --- the servers ------------------------------------------------------------------------------
taskset -c 0 "$HERD" serve --threads 1 --root "$WORK/www" --listen "127.0.0.1:$P_HERD" >"$WORK/herd.out" 2>"$WORK/herd.err" &
HERD_PID=$!
wait_http "herd serve" "http://127.0.0.1:$P_HERD/9x9.html" "$HERD_PID"
log "herd serve $HERD_PID on 127.0.0.1:$P_HERD (affinity $(taskset -pc "$HERD_PID" | sed 's/.*: //'), $(find "/proc/$HERD_PID/task" -mindepth 1 -maxdepth 1 | wc -l) threads)"

fill_template "$SERVE_DIR/php-fpm.conf" "$WORK/php-fpm.conf"
taskset -c 0 "$FPM_BIN" -F -y "$WORK/php-fpm.conf" >"$WORK/fpm.out" 2>&1 &
FPM_PID=$!
for _ in $(seq 100); do
    kill -0 "$FPM_PID" 2>/dev/null || die "php-fpm exited at start: $(tail -5 "$WORK/fpm.out")"
    mapfile -t FPM_KIDS < <(children_of "$FPM_PID")
    [[ -S $WORK/php-fpm.sock && ${#FPM_KIDS[@]} == "$FPM_CHILDREN" ]] && break
    sleep 0.1
done
[[ ${#FPM_KIDS[@]} == "$FPM_CHILDREN" ]] || die "php-fpm: ${#FPM_KIDS[@]} children after 10 s, expected $FPM_CHILDREN"
log "php-fpm master $FPM_PID, children ${FPM_KIDS[*]} (affinity $(taskset -pc "${FPM_KIDS[0]}" | sed 's/.*: //'))"

fill_template "$SERVE_DIR/nginx.conf" "$WORK/nginx.conf" "$P_NGINX" "$P_OFC" "$P_DEF"
taskset -c 0 nginx -c "$WORK/nginx.conf" -p "$WORK/" -e "$WORK/nginx-error.log" || die "nginx did not start"
for _ in $(seq 50); do [[ -s $WORK/nginx.pid ]] && break; sleep 0.1; done
[[ -s $WORK/nginx.pid ]] || die "nginx wrote no pid file"
NGINX_PID=$(cat "$WORK/nginx.pid")
for _ in $(seq 50); do
    NGINX_WORKER=$(children_of "$NGINX_PID" | head -1)
    [[ -n $NGINX_WORKER ]] && break
    sleep 0.1
done
[[ -n $NGINX_WORKER ]] || die "nginx worker not found"
wait_http nginx "http://127.0.0.1:$P_NGINX/9x9.html" "$NGINX_PID"
wait_http "nginx (open_file_cache)" "http://127.0.0.1:$P_OFC/9x9.html" "$NGINX_PID"
wait_http "nginx (deferred)" "http://127.0.0.1:$P_DEF/9x9.html" "$NGINX_PID"
log "nginx master $NGINX_PID worker $NGINX_WORKER (affinity $(taskset -pc "$NGINX_WORKER" | sed 's/.*: //')) on 127.0.0.1:$P_NGINX, :$P_OFC and :$P_DEF"

fill_template "$SERVE_DIR/lighttpd.conf" "$WORK/lighttpd.conf" "$P_LIGHTTPD"
taskset -c 0 lighttpd -D -f "$WORK/lighttpd.conf" >"$WORK/lighttpd.out" 2>&1 &
LIGHTTPD_PID=$!
wait_http lighttpd "http://127.0.0.1:$P_LIGHTTPD/9x9.html" "$LIGHTTPD_PID"
log "lighttpd $LIGHTTPD_PID on 127.0.0.1:$P_LIGHTTPD (affinity $(taskset -pc "$LIGHTTPD_PID" | sed 's/.*: //'))"

if [[ $APACHE == 1 ]]; then
    fill_template "$SERVE_DIR/apache2.conf" "$WORK/apache2.conf" "$P_APACHE"
    taskset -c 0 apache2 -f "$WORK/apache2.conf" -DFOREGROUND >"$WORK/apache2.out" 2>&1 &
    APACHE_PID=$!
    wait_http apache2 "http://127.0.0.1:$P_APACHE/9x9.php" "$APACHE_PID"
    mapfile -t APACHE_KIDS < <(children_of "$APACHE_PID")
    log "apache2 $APACHE_PID, children ${APACHE_KIDS[*]} (affinity $(taskset -pc "$APACHE_PID" | sed 's/.*: //')) on 127.0.0.1:$P_APACHE"
fi

# --- what each scenario runs ------------------------------------------------------------------
declare -A URL SIZE GOLD GROUP SERVERS
URL[herd]=http://127.0.0.1:$P_HERD/f6397.html
URL[nginx]=http://127.0.0.1:$P_NGINX/f6397.html
URL[nginx-ofc]=http://127.0.0.1:$P_OFC/f6397.html
URL[nginx-deferred]=http://127.0.0.1:$P_DEF/f6397.html
URL[lighttpd]=http://127.0.0.1:$P_LIGHTTPD/f6397.html
URL[herd-9x9]=http://127.0.0.1:$P_HERD/9x9
URL[herd-static]=http://127.0.0.1:$P_HERD/9x9.html
URL[nginx-php]=http://127.0.0.1:$P_NGINX/9x9.php
URL[apache-php]=http://127.0.0.1:$P_APACHE/9x9.php
for s in herd nginx nginx-ofc nginx-deferred lighttpd; do SIZE[$s]=6397; GOLD[$s]=$WORK/www/f6397.html; done
for s in herd-9x9 herd-static nginx-php apache-php; do SIZE[$s]=1692; GOLD[$s]=$GOLDEN; done
# whose CPU time is charged to a run
GROUP[herd]=herd GROUP[herd-9x9]=herd GROUP[herd-static]=herd
GROUP[nginx]=nginx GROUP[nginx-ofc]=nginx GROUP[nginx-deferred]=nginx GROUP[lighttpd]=lighttpd
GROUP[nginx-php]="nginx fpm" GROUP[apache-php]="apache fpm"
SERVERS[ka-6397]="herd nginx nginx-ofc lighttpd"
SERVERS[close-6397]="herd nginx nginx-ofc nginx-deferred lighttpd"
SERVERS[9x9]="herd-9x9 herd-static nginx-php"
if [[ $APACHE == 1 ]]; then SERVERS[9x9]+=" apache-php"; fi
declare -A CLOSE=([ka-6397]=0 [close-6397]=1 [9x9]=0)
for scen in $SCENARIOS; do [[ -n ${SERVERS[$scen]:-} ]] || die "unknown scenario $scen"; done

# PIDs whose CPU is charged to group $1
group_pids() {
    local g
    for g in $1; do
        case $g in
            herd) echo "$HERD_PID" ;;
            nginx) echo "$NGINX_WORKER" ;;
            lighttpd) echo "$LIGHTTPD_PID" ;;
            fpm) echo "$FPM_PID"; children_of "$FPM_PID" ;;
            apache) echo "$APACHE_PID"; children_of "$APACHE_PID" ;;
        esac
    done
}
# CPU time (ns) of all threads of the given PIDs
cpu_ns() {
    local p files=()
    for p in "$@"; do files+=("/proc/$p/task/"*/schedstat); done
    cat "${files[@]}" 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'   # mawk: %d stops at 2^31
}
cpu_lines() { awk '$1 == "cpu0" || $1 == "cpu1" {$1 = ""; printf "%s;", $0}' /proc/stat; }
# server-side counters "connections requests" (herd: /herd/stats; nginx: stub_status), or "- -"
srv_counters() {
    case $1 in
        herd*) curl -s --max-time 2 "http://127.0.0.1:$P_HERD/herd/stats" |
                   python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["connections"], d["requests"])' 2>/dev/null || echo "- -" ;;
        nginx | nginx-ofc | nginx-deferred | nginx-php) curl -s --max-time 2 "http://127.0.0.1:$P_NGINX/status" |
                   awk '/^ *[0-9]+ +[0-9]+ +[0-9]+/ {print $1, $3; f=1} END {if (!f) print "- -"}' ;;
        *) echo "- -" ;;
    esac
}

# --- correctness, before any timing ---------------------------------------------------------------
for scen in $SCENARIOS; do
    mode=""
    if [[ ${CLOSE[$scen]} == 1 ]]; then mode=close; fi
    for s in ${SERVERS[$scen]}; do
        check_url "$s" "${URL[$s]}" "${SIZE[$s]}" "${GOLD[$s]}" "$mode"
    done
done
opcache=$(curl -s --max-time 5 "http://127.0.0.1:$P_NGINX/opcache.php")
[[ $opcache == "opcache on"* ]] || die "OPcache is not enabled in the php-fpm pool: $opcache"
log "php-fpm: $opcache"

# --- versions ---------------------------------------------------------------------------------------
{
    echo "date: $(date -Is)"
    echo "uname -r: $(uname -r)"
    echo "kernel: $(uname -srvm)"
    echo "debian: $(cat /etc/debian_version)"
    echo "nproc: $(nproc); cpu: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
    herd_versions "herd=$HERD"
    echo "nginx -v: $(nginx -v 2>&1) ($(dpkg-query -W -f '${Package} ${Version}' nginx-light 2>/dev/null || true))"
    echo "lighttpd -v: $(lighttpd -v 2>&1 | head -1)"
    echo "php-fpm -v: $("$FPM_BIN" -v 2>&1 | head -1)"
    echo "php-fpm opcache (through the pool, before the runs): $opcache"
    [[ $APACHE == 1 ]] && echo "apache2 -v: $(apache2 -v 2>&1 | head -1)"
    echo "wrk -v: $(wrk -v 2>&1 | head -1 || true)"
    echo "curl: $(curl --version | head -1)"
    echo "ports: herd $P_HERD, nginx $P_NGINX (open_file_cache: $P_OFC, deferred: $P_DEF), lighttpd $P_LIGHTTPD${P_APACHE:+, apache2 $P_APACHE}"
    echo "pinning: servers taskset -c 0, wrk taskset -c 1 (wrk -t1 -c$CONNECTIONS -d${DURATION}s)"
    echo "php-fpm children: $FPM_CHILDREN (pm = static)"
    echo "rounds: $ROUNDS; scenarios: $SCENARIOS"
    echo "command: QUICK=$QUICK ROUNDS=$ROUNDS DURATION=$DURATION CONNECTIONS=$CONNECTIONS APACHE=$APACHE SCENARIOS=\"$SCENARIOS\" PROFILE=${PROFILE:-0} PERF_RECORD=${PERF_RECORD:-0} bench/serve.sh"
    echo "tcp_tw_reuse: $(cat /proc/sys/net/ipv4/tcp_tw_reuse); ip_local_port_range: $(tr '\t' '-' </proc/sys/net/ipv4/ip_local_port_range); somaxconn: $(cat /proc/sys/net/core/somaxconn)"
    echo "loadavg at start: $(cat /proc/loadavg)"
} >"$RES/serve-versions.txt"

if [[ ${PROFILE:-0} != 1 ]]; then
    echo "seq,start_unix,round,scenario,server,requests,seconds,rps,sock_errors,non2xx,rc,latency_avg,srv_cpu_s,srv_cpu_us_per_req,wrk_cpu_s,wrk_cpu_us_per_req,wrk_cpu_pct,cpu0_busy_pct,cpu0_softirq_pct,cpu1_busy_pct,steal_pct,cpu0_us_per_req,srv_conns,srv_reqs" >"$CSV"
fi
SEQ=0

# run_one SCEN SERVER ROUND (ROUND "w" = warm-up, not in the CSV)
run_one() {
    local scen=$1 s=$2 round=$3 id base hdr=() rc=0
    if [[ $round == w ]]; then
        id=warmup-$scen-$s
    else
        SEQ=$((SEQ + 1))
        id=$(printf '%03d-%s-%s-r%s' "$SEQ" "$scen" "$s" "$round")
    fi
    base=$RES/raw/$id
    [[ ${CLOSE[$scen]} == 1 ]] && hdr=(-H 'Connection: close')
    local dur=$DURATION
    [[ $round == w ]] && dur=1
    local cmd=(taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${dur}s" "${hdr[@]}" "${URL[$s]}")
    local pids
    mapfile -t pids < <(group_pids "${GROUP[$s]}")
    printf '%q ' "${cmd[@]}" >"$base.cmd"; echo >>"$base.cmd"
    echo "# server CPU: PIDs ${pids[*]} (${GROUP[$s]})" >>"$base.cmd"
    local c0 c1 n0 n1 st0 st1 t0
    c0=$(srv_counters "$s"); n0=$(cpu_ns "${pids[@]}"); st0=$(cpu_lines); t0=$(date +%s.%N)
    timeout -k 5 $((dur + 30)) /usr/bin/time -f '%e %U %S' -o "$base.time" "${cmd[@]}" >"$base.out" 2>"$base.err" &
    CUR_PID=$!
    wait "$CUR_PID" || rc=$?
    CUR_PID=
    st1=$(cpu_lines); n1=$(cpu_ns "${pids[@]}"); c1=$(srv_counters "$s")
    local p
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || die "server process $p of $s died during $id"; done
    [[ $round == w ]] && { sleep "$PAUSE_S"; return 0; }
    python3 - "$SEQ" "$t0" "$round" "$scen" "$s" "$base.out" "$base.time" "$rc" "$n0" "$n1" "$st0" "$st1" "$c0" "$c1" >>"$CSV" <<'EOF'
import re, sys
seq, t0, rnd, scen, srv, out, tfile, rc, n0, n1, st0, st1, c0, c1 = sys.argv[1:]
txt = open(out).read()
m = re.search(r"(\d+) requests in ([\d.]+)(m?s)", txt)
req = int(m.group(1)) if m else 0
secs = float(m.group(2)) / (1000 if m and m.group(3) == "ms" else 1) if m else 0
m = re.search(r"Requests/sec:\s+([\d.]+)", txt)
rps = float(m.group(1)) if m else 0.0
m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", txt)
sockerr = sum(map(int, m.groups())) if m else 0
m = re.search(r"Non-2xx or 3xx responses: (\d+)", txt)
non2xx = int(m.group(1)) if m else 0
m = re.search(r"Latency\s+(\S+)", txt)
lat = m.group(1) if m else ""
try:
    e, u, s = map(float, open(tfile).read().split()[-3:])
except Exception:
    e = u = s = None
srv_cpu = float(int(n1) - int(n0)) / 1e9
def cpus(x):
    return [list(map(int, l.split())) for l in x.strip(";").split(";")]
a, b = cpus(st0), cpus(st1)
d = [[y - x for x, y in zip(p, q)] for p, q in zip(a, b)]  # user nice system idle iowait irq softirq steal
def busy(v):
    tot = sum(v[:8]) or 1
    return 100.0 * (tot - v[3] - v[4]) / tot, 100.0 * v[6] / tot, 100.0 * v[7] / tot, (tot - v[3] - v[4]) / 100.0
b0, si0, steal0, busy0_s = busy(d[0])
b1, _, steal1, _ = busy(d[1])
per = lambda x: "%.3f" % (x / req * 1e6) if req and x is not None else ""
wrk_cpu = (u + s) if u is not None else None
cc0, cc1 = c0.split(), c1.split()
conns = reqs = ""
if "-" not in cc0 + cc1:
    # minus the counters' own query (1 connection and 1 request each)
    conns, reqs = int(cc1[0]) - int(cc0[0]) - 1, int(cc1[1]) - int(cc0[1]) - 1
print(",".join(str(x) for x in [seq, "%.3f" % float(t0), rnd, scen, srv, req, "%.3f" % secs, "%.1f" % rps,
      sockerr, non2xx, rc, lat, "%.4f" % srv_cpu, per(srv_cpu), "%.4f" % wrk_cpu if wrk_cpu is not None else "", per(wrk_cpu),
      "%.1f" % (100.0 * wrk_cpu / e) if wrk_cpu is not None and e else "",
      "%.1f" % b0, "%.1f" % si0, "%.1f" % b1, "%.1f" % max(steal0, steal1), per(busy0_s), conns, reqs]))
EOF
    local line
    line=$(tail -1 "$CSV")
    log "$(awk -F, '{printf "%-11s %-12s r%s %9s req/s  server %7s us/req  wrk %6s us/req (%5s%% of CPU 1)  CPU0 %5s%% busy  conns %s  errors %s/%s", $4, $5, $3, $8, $14, $16, $17, $18, $23, $9, $10}' <<<"$line")"
    [[ $rc == 0 ]] || log "  WARNING: wrk exit $rc; see $base.err"
    if [[ $(cut -d, -f9 <<<"$line") != 0 || $(cut -d, -f10 <<<"$line") != 0 ]]; then
        log "  WARNING: socket errors or non-2xx responses in $id; see $base.out"
    fi
    sleep "$PAUSE_S"
}

# --- PROFILE=1: syscalls and CPU per request (perf stat on tracepoints), instead of the rounds ----------
# perf stat -p <server PIDs> counts, for one wrk run per server, every syscall the server makes
# (syscalls:sys_enter_* tracepoints: cheap, unlike strace, so the server's batching is unchanged),
# its task-clock and context switches; the counts are divided by wrk's requests. PERF_RECORD=1 adds a
# second run per server (not PHP) sampled with perf record -e cpu-clock -g (raw/profile-*.flat.txt,
# *.dso.txt, *.report.txt).
# TCP segments sent and RSTs sent, machine-wide (/proc/net/snmp): on loopback, both directions
tcp_segs() { awk '/^Tcp:/ {n++; if (n == 2) print $12, $15}' /proc/net/snmp; }

profile_one() {
    local scen=$1 s=$2 base=$RES/raw/profile-$1-$2 hdr=() pids rc=0 perfpid recpid
    [[ ${CLOSE[$scen]} == 1 ]] && hdr=(-H 'Connection: close')
    mapfile -t pids < <(group_pids "${GROUP[$s]}")
    local csvpids
    csvpids=$(IFS=,; echo "${pids[*]}")
    timeout -k 5 $((DURATION + 30)) perf stat -x, -o "$base.perf" -e "$PERF_EVENTS" -p "$csvpids" -- sleep "$((DURATION + 1))" &
    perfpid=$!
    sleep 0.5
    tcp_segs >"$base.tcp"
    # wrk itself under perf stat too: the client's syscalls and CPU per request depend on the server
    timeout -k 5 $((DURATION + 30)) perf stat -x, -o "$base.wrk.perf" -e "$PERF_EVENTS" -- \
        taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "${hdr[@]}" "${URL[$s]}" >"$base.out" 2>&1 &
    CUR_PID=$!
    wait "$CUR_PID" || rc=$?
    CUR_PID=
    tcp_segs >>"$base.tcp"
    wait "$perfpid" || log "WARNING: perf stat exited non-zero for $s; see $base.perf"
    # a second run, sampled (not at the same time as perf stat: its tracepoints would show up in the profile)
    if [[ ${PERF_RECORD:-0} == 1 && $s != *php ]]; then
        sleep "$PAUSE_S"
        timeout -k 5 $((DURATION + 30)) perf record -q -e cpu-clock -F 2999 -g -o "$base.data" -p "$csvpids" -- sleep "$((DURATION + 1))" 2>"$base.record.err" &
        recpid=$!
        sleep 0.5
        timeout -k 5 $((DURATION + 30)) taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "${hdr[@]}" "${URL[$s]}" >"$base.record.out" 2>&1 &
        CUR_PID=$!
        wait "$CUR_PID" || rc=$?
        CUR_PID=
        wait "$recpid" || true
        perf report -i "$base.data" --stdio --no-children --percent-limit 2 --sort symbol 2>/dev/null | head -300 >"$base.report.txt" || true
        perf report -i "$base.data" --stdio --no-children -g none --percent-limit 0.3 --sort dso,symbol 2>/dev/null | grep -v '^$' | head -100 >"$base.flat.txt" || true
        perf report -i "$base.data" --stdio --no-children -g none --sort dso 2>/dev/null | grep -v '^$' >"$base.dso.txt" || true
        # the share of the server's CPU under each system call (kernel entry points, children included)
        perf report -i "$base.data" --stdio --children -g none --sort symbol 2>/dev/null |
            grep -E '__(x64|do)_sys_|do_syscall_64|entry_SYSCALL' >"$base.syscalls.txt" || true
        rm -f "$base.data"
    fi
    [[ $rc == 0 ]] || log "WARNING: wrk exit $rc in profile $scen $s"
    log "profile $scen $s: $(grep -Eo '[0-9]+ requests in' "$base.out" || echo '? requests')"
    sleep "$PAUSE_S"
}

if [[ ${PROFILE:-0} == 1 ]]; then
    command -v perf >/dev/null || die "perf is not installed (apt-get install -y linux-perf)"
    evs=(task-clock context-switches raw_syscalls:sys_enter)
    for sc in accept accept4 read recvfrom recvmsg readv write writev sendto sendmsg sendfile64 splice \
              epoll_wait epoll_pwait epoll_pwait2 epoll_ctl openat openat2 newfstat newfstatat statx close \
              setsockopt getsockopt shutdown ioctl fcntl pread64 lseek mmap munmap futex brk madvise \
              getsockname getpeername connect socket clock_gettime gettimeofday getpid getrusage times; do
        [[ -d /sys/kernel/tracing/events/syscalls/sys_enter_$sc ]] && evs+=("syscalls:sys_enter_$sc")
    done
    PERF_EVENTS=$(IFS=,; echo "${evs[*]}")
    log "PROFILE: perf stat on the servers, ${DURATION}s wrk run per server"
    for scen in $SCENARIOS; do
        for s in ${SERVERS[$scen]}; do run_one "$scen" "$s" w; profile_one "$scen" "$s"; done
    done
    python3 "$SERVE_DIR/profile_summary.py" "$RES/raw" >"$RES/serve-profile.md"
    cat "$RES/serve-profile.md"
    log "results: $RES"
    exit 0
fi

# --- warm-up (1 s each, not recorded), then the interleaved rounds ---------------------------------
log "warm-up; then $ROUNDS round(s) of $SCENARIOS, ${DURATION}s per run, wrk -t1 -c$CONNECTIONS"
for scen in $SCENARIOS; do
    for s in ${SERVERS[$scen]}; do run_one "$scen" "$s" w; done
done
for round in $(seq 1 "$ROUNDS"); do
    for scen in $SCENARIOS; do
        read -r -a list <<<"${SERVERS[$scen]}"
        n=${#list[@]}
        for i in $(seq 0 $((n - 1))); do
            run_one "$scen" "${list[$(((i + round - 1) % n))]}" "$round"
        done
    done
done

echo "php-fpm opcache (through the pool, after the runs): $(curl -s --max-time 5 "http://127.0.0.1:$P_NGINX/opcache.php")" >>"$RES/serve-versions.txt"
echo "loadavg at end: $(cat /proc/loadavg)" >>"$RES/serve-versions.txt"
python3 "$SERVE_DIR/summarize.py" "$CSV" "$RES/serve-versions.txt" "$RES/serve-summary.csv" | tee "$RES/serve-summary.md"
log "results: $RES"
