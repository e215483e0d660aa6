#!/usr/bin/env bash
# 50,000 connections from a machine where no process may hold more than 20,000 files: three
# herd agents (`herd cluster run --local 3`) of ~16,700 connections each, over three source
# addresses (a local port range each), against nginx with five workers of 12,000 connections
# (issue 21; issue 4's check that one process could not make). Prints and keeps the merged
# figures, each agent's peak RSS, its start lateness, and the merge's own cost (figures.txt).
#
#   cargo build --profile dist -p herd && bench/cluster-50k.sh
#
# A closed loop: every connection has a request in flight all the time, so all 50,000 are
# open at once (an open loop at a moderate rate would reuse a few idle ones: herd opens a
# connection only when a due request finds none waiting). The server side's own count of
# established connections is sampled to show it.
#
# Environment: HERD (binary), CONNS (50000), RATE (unset: closed loop; else req/s in all),
# DURATION (30s), WARMUP (20s; the agents open every connection before the start, and the
# warm-up lets nginx's accept queues and the first requests settle), PORT
# (18090), OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${PORT:-18090}   # read before lib.sh, which empties PORT
# shellcheck source=bench/lib.sh
source bench/lib.sh   # herd_versions
HERD=${HERD:-target/dist/herd}
CONNS=${CONNS:-50000}
RATE=${RATE:-}
DURATION=${DURATION:-30s}
WARMUP=${WARMUP:-20s}
PORT=$port
out=${OUT:-bench/results/$(date -u +%Y-%m-%d-%H%M%S)-cluster-50k}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$HERD" ] || { echo "error: no $HERD: cargo build --profile dist -p herd" >&2; exit 1; }
[ -x "$nginx" ] || { echo "error: nginx is missing: apt-get install nginx-light" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
chmod 755 "$work"
cleanup() {
  [ -n "${nginx_pid:-}" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  [ -n "${sampler_pid:-}" ] && kill "$sampler_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/nginx.conf" <<EOF
worker_processes 5;
worker_rlimit_nofile 20000;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 12000; }
http {
  access_log off;
  keepalive_timeout 300s;
  keepalive_requests 10000000;
  client_body_temp_path $work/body; proxy_temp_path $work/proxy;
  fastcgi_temp_path $work/fastcgi; uwsgi_temp_path $work/uwsgi; scgi_temp_path $work/scgi;
  server {
    listen 127.0.0.1:$PORT reuseport backlog=65535;
    location / { return 200 "hello, herd!\n"; }
  }
}
EOF
"$nginx" -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
nginx_pid=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$PORT/" >/dev/null 2>&1 && break
  sleep 0.1
done

{
  echo "date: $(date -u +%FT%TZ)"
  herd_versions "herd=$HERD"
  echo "nginx: $("$nginx" -v 2>&1)"
  echo "kernel: $(uname -r); cpus: $(nproc); open files (hard): $(ulimit -Hn)"
  echo "command: $HERD cluster run --local 3 -- http://127.0.0.1:$PORT/ -c $CONNS -t 1 ${RATE:+--rate $RATE} -d $DURATION --warmup $WARMUP --bind 127.0.0.2-127.0.0.4 --json $out/run.json --hlog $out/run.hlog"
} > "$out/setup.txt"
cat "$out/setup.txt"

# Peak RSS of every process under herd cluster (coordinator and agents), sampled twice a
# second: VmHWM at the end would be lost with the process.
sample() {
  while sleep 0.5; do
    for p in $(pgrep -P "$1" 2>/dev/null) "$1"; do
      awk -v p="$p" '/^VmHWM/ {print p, $2}' "/proc/$p/status" 2>/dev/null || true
    done
    # The coordinator's own CPU time (utime + stime, clock ticks): the merge's cost.
    awk '{print "coordinator-cpu-ticks", $14 + $15}' "/proc/$1/stat" 2>/dev/null || true
    # The server's own count of connections established to it.
    echo "established $(ss -Htn state established "( sport = :$PORT )" | wc -l)"
  done
}
# %M is wait4's ru_maxrss, which counts the processes the coordinator reaped: the largest of the
# coordinator and its agents, not the coordinator alone (its own VmHWM is sampled in rss.txt).
/usr/bin/time -f '%e s elapsed, %U s user, %S s system (coordinator and agents), %M KiB max RSS of the largest process (coordinator or an agent)' \
  "$HERD" cluster run --local 3 -- "http://127.0.0.1:$PORT/" -c "$CONNS" -t 1 ${RATE:+--rate "$RATE"} \
  -d "$DURATION" --warmup "$WARMUP" --bind 127.0.0.2-127.0.0.4 \
  --json "$out/run.json" --hlog "$out/run.hlog" > "$out/summary.txt" 2> "$out/time.txt" &
herd_pid=$!
sleep 0.3
cluster_pid=$(pgrep -P "$herd_pid" | head -1)
sample "$cluster_pid" > "$out/rss.txt" &
sampler_pid=$!
wait "$herd_pid"
kill "$sampler_pid" 2>/dev/null || true
cat "$out/summary.txt" "$out/time.txt"

python3 - "$out" "$cluster_pid" <<'EOF' | tee "$out/figures.txt"
import json, sys, collections, pathlib
out = pathlib.Path(sys.argv[1])
coordinator = sys.argv[2]
r = json.loads((out / "run.json").read_text())
peak = collections.defaultdict(int)
established = 0
coordinator_ticks = 0
for line in (out / "rss.txt").read_text().split("\n"):
    if line.startswith("established"):
        established = max(established, int(line.split()[1]))
    elif line.startswith("coordinator-cpu-ticks"):
        coordinator_ticks = int(line.split()[1])
    elif line.strip():
        pid, kib = line.split()
        peak[pid] = max(peak[pid], int(kib))
print(f"connections established to nginx at once (ss, sampled twice a second): {established}")
import os
hz = os.sysconf("SC_CLK_TCK")
print(f"coordinator CPU (barrier, merge, outputs, summary): {coordinator_ticks / hz:.2f} s for the "
      f"whole run ({r['elapsed_s']:.0f} s measured, after the warm-up)")
lat = r["latency_us"]["total"]
print(f"merged: {r['connections']} connections, {r['requests']['completed']} completed, "
      f"{r['requests']['failed']} failed, {r['requests']['per_second']:.0f} req/s, "
      f"p50 {lat.get('p50')} us p99 {lat.get('p99')} us, client {r['client']['verdict']}")
for a in r["agents"]:
    s = a["steps"][-1]
    print(f"agent {a['index']}: {s['connections']} connections ({a.get('opened_ahead', 0)} opened before "
          f"the start in {a.get('opening_ms', 0):.0f} ms, {a.get('not_opened_ahead', 0)} not), "
          f"{s['requests']['completed']} completed, started {a['start_late_us']:.0f} us late, "
          f"clock {a['clock_offset_us']:+.1f} us")
# VmHWM is in KiB (1 MiB = 1,024 KiB); the last half second of each process is not sampled.
for pid, kib in sorted(peak.items()):
    who = "coordinator" if pid == coordinator else "agent"
    print(f"peak RSS (VmHWM, sampled) of {who} {pid}: {kib:,} KiB = {kib / 1024:.1f} MiB")
EOF
echo "kept in $out"
