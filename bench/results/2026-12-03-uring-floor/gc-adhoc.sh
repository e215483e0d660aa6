#!/usr/bin/env bash
# Ad-hoc (2026-12-03, issue 35): floor, floor-uring (hot ring) and gcannon under the same 25 % quota, in
# alternating rounds; requests counted at nginx (gcannon's own count skips its first 100 ms).
# usage: GCANNON=path gc.sh ROUNDS OUTDIR
set -euo pipefail
source /work/wt/uringfloor/bench/lib.sh
HERD=/nonexistent
R=${1:-5} OUT=${2:-/tmp/uf/gc}
mkdir -p "$OUT"
trap 'bench_cleanup' EXIT
bench_setup >/dev/null 2>&1
cg_setup 25000 100000 2>/dev/null
[[ $CG_MODE != none ]] || { echo "no quota"; exit 1; }
build_floor_uring
echo "round,tool,requests_at_nginx,elapsed_s,cpu_s,cpu_us_per_req,rps,loadavg1" > "$OUT/gc.csv"
url=http://127.0.0.1:$PORT/f6397.html
for r in $(seq 0 "$R"); do
  for t in floor floor-uring-hot gcannon floor-nap; do
    case $t in
      floor) cmd=("$FLOOR" -c 100 -n 75000 -k 1 127.0.0.1 "$PORT" /f6397.html) ;;
      floor-uring-hot) cmd=("$FLOOR_URING" -c 100 -n 75000 -k 1 -o fixed,bufs=64,buf=8192,wait=32,minwait=100 127.0.0.1 "$PORT" /f6397.html) ;;
      floor-nap) cmd=(/tmp/uf/floor-nap -c 100 -n 75000 -k 1 127.0.0.1 "$PORT" /f6397.html) ;;
      gcannon) cmd=(env HOME="$BENCH" "$GCANNON" "$url" -c 100 -t 1 -d 3 -p 1) ;;
    esac
    a=$(nginx_status | cut -d' ' -f2)
    python3 /work/wt/uringfloor/bench/rusage.py "$OUT/$r-$t.rusage" --cg "$CG_CPU" -- taskset -c 1 "${cmd[@]}" >"$OUT/$r-$t.out" 2>&1
    b=$(nginx_status | cut -d' ' -f2)
    n=$((b - a - 1))
    read -r e u s _ < "$OUT/$r-$t.rusage"
    echo "$r,$t,$n,$e,$(awk -v u=$u -v s=$s -v n=$n -v e=$e 'BEGIN{printf "%.4f,%.3f,%.0f", u+s, (u+s)*1e6/n, n/e}'),$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/gc.csv"
    sleep 1
  done
done
