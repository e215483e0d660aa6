#!/usr/bin/env bash
# The bench scripts' own check, without root, a server or a load (scripts/test.sh runs it): every
# script parses (bash -n), bench/idle-rss.sh refuses what it cannot measure, and bench/lib.sh's
# tables agree with themselves: each tool builds a command in each scenario it fits and is
# refused in the others, the pipelined tools write --pipeline / -p of their depth, and parse_out
# reads the figures out of a sample of each issue-35 tool's output. A real run of the scripts
# needs root, nginx and minutes (QUICK=1 bench/run.sh); this catches a broken table in a second.
#
# usage: bench/check.sh
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

fail=0
bad() { echo "bench/check.sh: $*" >&2; fail=1; }

for f in "$BENCH_HERE"/*.sh; do
    bash -n "$f" || bad "$f does not parse"
done

# Placeholders: build_cmd only assembles argv, nothing runs.
PORT=1 H2C_PORT=2 H2_PORT=3 H3_PORT=4 BENCH=/tmp/b
HERD=/herd HERD_BASE=/herd-base GCANNON=/gcannon
SCALE_DIV=1 WRK_S=4
TOOLS_ALL="floor herd herd-run herd-run-base herd-run-p16 herd-run-base-p16 gcannon
    gcannon-p16 herd-uring herd-run-uring herd-run-uring-p16 herd-https herd-https-uring ab-https
    herd-run-trace herd-run-trace-p16"
for scen in ka-6397-c100 close-6397-c100 ka-1B-c100 ka-6397-c100-p16 ka-1B-c100-p16; do
    [[ -n ${NREQ[$scen]:-} && -n ${FILE[$scen]:-} && -n ${KA[$scen]:-} ]] ||
        bad "scenario $scen is not defined"
    for tool in $TOOLS_ALL; do
        if fits "$tool" "$scen"; then
            build_cmd "$tool" "$scen" || bad "$tool fits $scen but build_cmd refuses it"
            argv=" ${CMD[*]} "
            [[ $argv == *"/${FILE[$scen]} "* ]] ||
                bad "$tool $scen: no URL or path of ${FILE[$scen]}: $argv"
            case $tool in
                *-uring*)
                    [[ $argv == *" --io uring ${CMD[-1]} " && $argv == " /herd "* ]] ||
                        bad "$tool: not herd with --io uring before its URL: $argv" ;;&
                *-trace*)
                    [[ $argv == *" --trace-context ${CMD[-1]} " && $argv == " /herd run "* ]] ||
                        bad "$tool: not herd run with --trace-context before its URL: $argv" ;;&
                herd-run-uring-p16 | herd-run-trace-p16)
                    [[ $argv == *" --pipeline 16 "* ]] || bad "$tool: no --pipeline 16: $argv" ;;
                herd-run-p16 | herd-run-base-p16)
                    [[ $argv == *" --pipeline 16 "* ]] || bad "$tool: no --pipeline 16: $argv" ;;
                gcannon-p16) [[ $argv == *" -p 16 "* ]] || bad "$tool: no -p 16: $argv" ;;
                gcannon)
                    [[ $argv == *" -p 1 "* && $argv == *" -t 1 "* ]] || bad "$tool: not -p 1 -t 1: $argv" ;;
            esac
            [[ $tool == herd-run-base* && $argv != *" /herd-base "* ]] &&
                bad "$tool does not run HERD_BASE: $argv"
        else
            (build_cmd "$tool" "$scen" 2>/dev/null) &&
                bad "$tool does not fit $scen but build_cmd builds it"
        fi
    done
done
fits herd-run-p16 ka-6397-c100-p16 || bad "herd-run-p16 must run ka-6397-c100-p16"
fits gcannon-p16 ka-6397-c100-p16 || bad "gcannon-p16 must run ka-6397-c100-p16"
fits floor ka-6397-c100-p16 && bad "the floor does not pipeline: it must not run ka-6397-c100-p16"
fits gcannon close-6397-c100 &&
    bad "gcannon must not run close-6397-c100 (it closes with an RST, not Connection: close)"
counts_at_server gcannon-p16 || bad "gcannon's count leaves out its warm-up: nginx must count it"
counts_at_server herd-run && bad "herd run counts its own requests"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# gcannon 0.5.3's report (src/stats.c), one clean and one with every kind of failure
cat >"$tmp/g-ok" <<'EOF'
gcannon v0.5.3
  Pipeline:  16

  Thread Stats   Avg      p50      p90      p99    p99.9
    Latency   41.26ms  40.84ms  52.40ms  62.69ms  72.51ms

  38543 requests in 2.00s, 38543 responses
  Throughput: 19.26K req/s
  Status codes: 2xx=38543, 3xx=0, 4xx=0, 5xx=0
  Latency samples: 38543 / 38543 responses (100.0%)
EOF
cat >"$tmp/g-bad" <<'EOF'
  2697 requests in 1.00s, 2681 responses
  Status codes: 2xx=2670, 3xx=1, 4xx=2, 5xx=5, other=3
  Reconnects: 40
  Errors: connect 30, read 20, timeout 0
EOF
got=$(parse_out gcannon-p16 "$tmp/g-ok")
[[ $got == "38543 0" ]] || bad "parse_out gcannon (clean): $got"
# failed: 11 responses not 2xx + max(40 reconnects, 50 errors)
got=$(parse_out gcannon "$tmp/g-bad")
[[ $got == "2681 61" ]] || bad "parse_out gcannon (failures): $got"
# herd run's summary line (crates/run's report)
echo "  450000 requests in 14.635 s: 450000 completed, 0 failed; 30748.9 req/s" >"$tmp/h"
got=$(parse_out herd-run-p16 "$tmp/h")
[[ $got == "450000 0" ]] || bad "parse_out herd-run-p16: $got"
got=$(parse_out herd-run-uring-p16 "$tmp/h")
[[ $got == "450000 0" ]] || bad "parse_out herd-run-uring-p16: $got"
got=$(tool_depth herd-run-base-p16); [[ $got == 16 ]] || bad "tool_depth herd-run-base-p16: $got"

# bench/idle-rss.sh (issue 35's idle-connection memory) refuses, before it starts anything, what
# it cannot measure: an unknown backend, more connections than nginx may open files for, a run
# too short for every connection to go idle and be reused.
idle_refuses() {
    local why=$1 rc=0
    shift
    env "$@" HERD=/nonexistent "$BENCH_HERE/idle-rss.sh" >/dev/null 2>"$tmp/idle.err" || rc=$?
    [[ $rc == 64 ]] || bad "idle-rss.sh with $*: exit $rc, not 64 ($why): $(cat "$tmp/idle.err")"
}
idle_refuses "no such backend" IO=kqueue
idle_refuses "nginx over the 20,000 files" CONNS=19500
idle_refuses "shorter than two pauses" THINK=10s DURATION=15
idle_refuses "fewer connections than the base run" CONNS=500 BASE_CONNS=1000

[[ $fail == 0 ]] && echo "bench/check.sh: the bench scripts parse and bench/lib.sh's tables hold"
exit "$fail"
