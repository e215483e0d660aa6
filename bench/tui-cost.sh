#!/usr/bin/env bash
# Issue 36 point 2: what `herd run --tui` (TOOL=run) or `herd ab --tui` (TOOL=ab) costs. The
# same client-bound run with the live view and without it (herd run's one-line live line; ab's
# "Completed N requests" lines), alternately, each in a tmux terminal of its own (both need
# one), ROUNDS times: herd serve with one worker on CPU 0, the client with one thread and 50
# connections on CPU 1 (the client is the limit: it spends more per request than herd serve
# does), SECONDS_EACH s each, 100-byte pages. The figure: each round's req/s with the view over
# without it, and their median; the issue's bound is a 1 % difference.
#
# usage: bench/tui-cost.sh   env: HERD (target/dist/herd), TOOL (run), ROUNDS (6), SECONDS_EACH (5)
# Output: bench/results/<date>-tui-cost/ (summary.md, each run's JSON). Loopback only; herd
# serve and tmux stopped at the end (herd serve by its PID, tmux by its own socket).
set -euo pipefail
cd "$(dirname "$0")/.."
HERD=${HERD:-target/dist/herd}
ROUNDS=${ROUNDS:-6}
TOOL=${TOOL:-run}
case $TOOL in run | ab) ;; *) echo "error: TOOL is run or ab, not $TOOL" >&2; exit 2 ;; esac
SECONDS_EACH=${SECONDS_EACH:-5}
command -v tmux >/dev/null || { echo "error: tmux is missing: apt-get install tmux" >&2; exit 1; }
out=bench/results/$(date -u +%Y-%m-%d-%H%M%S)-tui-cost-$TOOL
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c 0 "$HERD" serve -t 1 --listen "127.0.0.1:$port" >/dev/null 2>&1 &
serve=$!
sock=herd-tui-cost-$$
trap 'kill "$serve" 2>/dev/null; tmux -L "$sock" kill-server 2>/dev/null || true' EXIT
sleep 0.5
url="http://127.0.0.1:$port/bytes/100"
one() { # VARIANT ROUND
  local flag=() json=$out/$1-$2.json
  [[ $1 == tui ]] && flag=(--tui)
  local client key
  if [[ $TOOL == run ]]; then
    client="run ${flag[*]} -t 1 -c 50 -d ${SECONDS_EACH}s --json $json"
    key="['requests']['per_second']"
  else
    # ab's -t, its -n past what the time allows.
    client="ab ${flag[*]} --threads 1 -c 50 -t $SECONDS_EACH -n 1000000000 --json $json"
    key="['results']['requests_per_second']"
  fi
  tmux -L "$sock" new-session -d -s "$1$2" -x 120 -y 40 \
    "taskset -c 1 $HERD $client $url > /dev/null; tmux -L $sock wait-for -S done$1$2"
  tmux -L "$sock" wait-for "done$1$2"
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$key)" "$json"
}
{
  echo "# herd $TOOL --tui's cost ($(date -u +%FT%TZ), $("$HERD" --version))"
  echo
  echo "Command: \`HERD=$HERD TOOL=$TOOL ROUNDS=$ROUNDS SECONDS_EACH=$SECONDS_EACH bench/tui-cost.sh\`"
  echo
  echo "| round | without req/s | with --tui req/s | with / without |"
  echo "|---|---|---|---|"
} > "$out/summary.md"
ratios=()
for r in $(seq 1 "$ROUNDS"); do
  # Alternate which goes first, so that neither always has the warmer machine.
  if ((r % 2)); then a=$(one line "$r"); b=$(one tui "$r"); else b=$(one tui "$r"); a=$(one line "$r"); fi
  ratio=$(python3 -c "print(f'{$b / $a:.4f}')")
  ratios+=("$ratio")
  echo "| $r | $a | $b | $ratio |" >> "$out/summary.md"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}')
echo >> "$out/summary.md"
echo "Median with / without: **$median** (load average before: $(cut -d' ' -f1-3 /proc/loadavg))" >> "$out/summary.md"
cat "$out/summary.md"
