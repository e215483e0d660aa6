#!/usr/bin/env bash
# The test command (README; .ci/run calls exactly this): installs what the tests need on a
# Debian 12 machine, then checks formatting, lints, and runs every test. A missing tool fails
# the run with the name of the package to install. What this kernel lacks (IP_VS for lvs-nat,
# tc netem for delay and loss) cannot be installed: the tests that need it check what they can
# (the lab's refusal) and the run ends with a list of what was not run here, and why.
set -euo pipefail
cd "$(dirname "$0")/.."

# What a test could not run on this kernel (IP_VS, netem, an IPv6 loopback) is listed at the
# end, never passed in silence (herd_testutil::not_run).
export HERD_NOT_RUN="${TMPDIR:-/tmp}/herd-not-run-$$.txt"
rm -f "$HERD_NOT_RUN"

# Each step says how long the one before it took, and the run ends with every step's time:
# the test command's budget (docs: ≤ 8 minutes on a fresh clone, 2 cores) is watched step by
# step.
STEP_NAME=""
STEP_START=$SECONDS
RUN_START=$SECONDS
STEP_TIMES=()
step_done() {
  if [ -n "$STEP_NAME" ]; then
    local took=$((SECONDS - STEP_START))
    STEP_TIMES+=("$(printf '%4d:%02d  %s' $((took / 60)) $((took % 60)) "$STEP_NAME")")
  fi
}
step() {
  step_done
  STEP_NAME="$*"
  STEP_START=$SECONDS
  printf '\n==> %s\n' "$*"
}
step_times() {
  step_done
  STEP_NAME=""
  [ ${#STEP_TIMES[@]} -gt 0 ] || return 0
  local all=$((SECONDS - RUN_START))
  echo
  echo "time by step (min:s):"
  printf '  %s\n' "${STEP_TIMES[@]}"
  printf '  %4d:%02d  in all\n' $((all / 60)) $((all % 60))
}

# Real peers and real servers the tests run against.
need_pkgs=()
command -v ab >/dev/null || need_pkgs+=(apache2-utils)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_pkgs+=(nginx-light)
command -v wrk >/dev/null || need_pkgs+=(wrk)
# HTTP/2 clients herd serve's h2 tests run (h2load, nghttp); curl speaks h2 too.
command -v h2load >/dev/null || need_pkgs+=(nghttp2-client)
command -v curl >/dev/null || need_pkgs+=(curl)
# The lab's server profiles (`[runner] profile = "perf"`, tests/it/lab_profile.rs).
command -v perf >/dev/null || need_pkgs+=(linux-perf)
# The servers herd-drivers renders configs for (its validate, live and php_pages tests), at
# the paths its Programs::locate looks at.
[ -x /usr/sbin/apache2 ] || need_pkgs+=(apache2)
[ -x /usr/sbin/lighttpd ] || need_pkgs+=(lighttpd)
[ -x /usr/bin/h2o ] || [ -x /usr/sbin/h2o ] || need_pkgs+=(h2o)
[ -x /usr/sbin/mini_httpd ] || need_pkgs+=(mini-httpd)
[ -x /usr/sbin/php-fpm8.2 ] || need_pkgs+=(php8.2-fpm)
[ -x /usr/bin/php-cgi ] || need_pkgs+=(php8.2-cgi)
# herd-drivers' TLS, HTTP/2 and HTTP/3 setups: caddy (the one HTTP/3 server in Debian 12),
# lighttpd's TLS module, and the clients its live tests prove each protocol with (curl, h2load,
# ngtcp2's gtlsclient for HTTP/3, openssl for the certificates).
[ -x /usr/bin/caddy ] || need_pkgs+=(caddy)
[ -f /usr/lib/lighttpd/mod_openssl.so ] || need_pkgs+=(lighttpd-mod-openssl)
command -v curl >/dev/null || need_pkgs+=(curl)
command -v h2load >/dev/null || need_pkgs+=(nghttp2-client)
command -v gtlsclient >/dev/null || need_pkgs+=(ngtcp2-client)
command -v openssl >/dev/null || need_pkgs+=(openssl)
# Network paths (herd-topo's and the lab's root tests): the rule paths' tools, the proxies
# on the router, and ethtool for shaped links.
command -v nft >/dev/null || [ -x /usr/sbin/nft ] || need_pkgs+=(nftables)
command -v iptables >/dev/null || [ -x /usr/sbin/iptables ] || need_pkgs+=(iptables)
[ -x /usr/sbin/haproxy ] || need_pkgs+=(haproxy)
[ -x /usr/sbin/sslh ] || need_pkgs+=(sslh)
command -v ethtool >/dev/null || [ -x /usr/sbin/ethtool ] || need_pkgs+=(ethtool)
# lvs-nat's tool: its test runs it where the kernel has IP_VS (not on this development machine).
[ -x /usr/sbin/ipvsadm ] || need_pkgs+=(ipvsadm)
command -v ip >/dev/null || [ -x /usr/sbin/ip ] || [ -x /usr/bin/ip ] || need_pkgs+=(iproute2)
[ -x /usr/sbin/sysctl ] || need_pkgs+=(procps)
# The lab's hosts over SSH (tests/it/lab_hosts.rs): an sshd in each namespace host, started
# by the test on its own config (policy-rc.d below keeps Debian from starting one system-wide).
[ -x /usr/sbin/sshd ] || need_pkgs+=(openssh-server)
command -v ssh >/dev/null || need_pkgs+=(openssh-client)
command -v gcc >/dev/null || need_pkgs+=(gcc)
# thttpd (seed 002's server) is not in Debian 12: scripts/build-thttpd.sh builds sthttpd 2.27
# (below) with autotools.
command -v make >/dev/null || need_pkgs+=(make)
command -v autoconf >/dev/null || need_pkgs+=(autoconf)
command -v automake >/dev/null || need_pkgs+=(automake)
[ -x /usr/bin/time ] || need_pkgs+=(time)
# h2spec (herd serve's HTTP/2 conformance, tests/it/serve_h2spec.rs) is not in Debian 12:
# scripts/build-h2spec.sh builds it (below) with Go, Debian's 1.19 or a newer one.
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || [ -x /usr/lib/go/bin/go ] ||
  need_pkgs+=(golang-go)
# HTTP/3 servers herd-engine's quic.rs and herd run --h3's tests run against (and caddy,
# above).
[ -x /usr/sbin/gtlsserver ] || need_pkgs+=(ngtcp2-server)
# NetBench (seed 004's file-serving half): Samba's smbd as the server, smbtorture's NBENCH
# (samba-testsuite) replaying dbench's client.txt as the client, smbclient for the driver's
# live test.
[ -x /usr/sbin/smbd ] || need_pkgs+=(samba)
command -v smbtorture >/dev/null || need_pkgs+=(samba-testsuite)
command -v smbclient >/dev/null || need_pkgs+=(smbclient)
[ -f /usr/share/dbench/client.txt ] || need_pkgs+=(dbench)
# The packages (scripts/package.sh; tests/it/package.rs installs the .deb into a fresh Debian
# root that mmdebstrap makes from Debian's packages).
command -v dpkg-shlibdeps >/dev/null || need_pkgs+=(dpkg-dev)
command -v objcopy >/dev/null || need_pkgs+=(binutils)
command -v mmdebstrap >/dev/null || need_pkgs+=(mmdebstrap)
# herd run --tui is tested as a person uses it: in tmux, keys sent, the screen captured.
command -v tmux >/dev/null || need_pkgs+=(tmux)
# herd run --metrics-listen's page is checked by promtool and scraped by a real Prometheus
# (tests/it/run_metrics.rs); the package's daemon is kept from starting (policy-rc.d below).
command -v prometheus >/dev/null || need_pkgs+=(prometheus)
# herd report --html is opened in headless Chromium by its test; a font for its screenshot.
[ -x /usr/bin/chromium ] || need_pkgs+=(chromium)
[ -d /usr/share/fonts/truetype/dejavu ] || need_pkgs+=(fonts-dejavu-core)
# herd cluster's Kubernetes objects are validated offline against the API's schemas by
# kubernetes-validate (PyPI), in a venv of its own under target/ (below).
python3 -c 'import venv, ensurepip' 2>/dev/null || need_pkgs+=(python3-venv)
# herd-stats' noise floor is checked against scipy (crates/stats/tests/reference/noise.py),
# with Debian's own python3, whatever python3 comes first on the PATH.
/usr/bin/python3 -c 'import scipy' 2>/dev/null || need_pkgs+=(python3-scipy)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  step "apt-get install ${need_pkgs[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: need root to install ${need_pkgs[*]} (or install them yourself)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # Keep Debian from starting the packaged daemons (a system nginx on port 80): the tests
  # start their own servers on free loopback ports. policy-rc.d is Debian's switch for this.
  policy=/usr/sbin/policy-rc.d
  made_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1
    trap 'rm -f "$policy"' EXIT # also if the install fails
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  if [ -n "$made_policy" ]; then rm -f "$policy"; fi
fi

# A failing step still shows how long each step took, up to it, and stops what this script
# started in the background (by PID).
bg_pids=()
trap 'step_times; for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

if ! command -v cargo >/dev/null; then
  echo "error: no Rust toolchain: install one with rustup (https://rustup.rs), then re-run" >&2
  exit 1
fi

# thttpd for herd-drivers' live and validate tests, herd run's and the lab's server tests and
# seed002: sthttpd 2.27 from ../shared/vendor (or GitHub), into the cargo target directory's
# peers/bin, where herd looks beside its own executable. 13 s of one core on a fresh machine
# (nothing once built): in the background while the tests build, which leaves a core idle
# now and then; waited for before they run.
thttpd_log="${TMPDIR:-/tmp}/herd-thttpd-$$.log"
scripts/build-thttpd.sh >"$thttpd_log" 2>&1 &
thttpd_pid=$!
bg_pids+=("$thttpd_pid")

# h2spec for herd serve's HTTP/2 conformance test, likewise into peers/bin (the test looks
# there, or at HERD_H2SPEC). About a minute of Go on a fresh machine, nothing once built: in
# the background while the tests build, like the venv below; waited for before they run.
h2spec_log="${TMPDIR:-/tmp}/herd-h2spec-$$.log"
scripts/build-h2spec.sh >"$h2spec_log" 2>&1 &
h2spec_pid=$!
bg_pids+=("$h2spec_pid")

# Offline Kubernetes schema checks (herd-cluster's manifest tests: schemas of 1.33 to 1.37)
# and herd.run.v1's JSON Schema (Python's jsonschema, which kubernetes-validate brings), in a
# venv under target/. Installed in the background while the tests build; waited for before
# they run.
kv=target/k8s-validate
pip_log="${TMPDIR:-/tmp}/herd-pip-$$.log"
pip_pid=""
if [ ! -x "$kv/bin/kubernetes-validate" ]; then
  mkdir -p target
  (python3 -m venv "$kv" &&
    "$kv/bin/pip" install --quiet --disable-pip-version-check kubernetes-validate==1.37.0) \
    >"$pip_log" 2>&1 &
  pip_pid=$!
  bg_pids+=("$pip_pid")
fi
export HERD_KUBERNETES_VALIDATE="$PWD/$kv/bin/kubernetes-validate"
export HERD_JSONSCHEMA_PYTHON="$PWD/$kv/bin/python3"

# A fresh Debian 12 root (mmdebstrap, from Debian's packages) for the package test, which
# installs herd's .deb into it (tests/it/package.rs): half a minute of downloads and dpkg, in
# the background while the tests build, made anew at every run and used once; waited for
# before they run.
# (As root only, as the test itself: it says so when it cannot run.)
fresh_root="${TMPDIR:-/tmp}/herd-fresh-bookworm-$$.tar"
fresh_log="${TMPDIR:-/tmp}/herd-fresh-root-$$.log"
fresh_pid=""
if [ "$(id -u)" = 0 ]; then
  nice -n 10 mmdebstrap --variant=apt --quiet bookworm "$fresh_root" >"$fresh_log" 2>&1 &
  fresh_pid=$!
  bg_pids+=("$fresh_pid")
fi
trap 'step_times; for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "$fresh_root" "${test_list:-}"' EXIT

step "noise.py --check (herd-stats' noise-floor reference figures are scipy's)"
/usr/bin/python3 crates/stats/tests/reference/noise.py --check

step "cargo fmt --check"
cargo fmt --all -- --check

# Clippy lints the workspace while the tests are built, in one build instead of two: it is
# the compiler for the workspace's own crates (what `cargo clippy` does, with `cargo check`
# in place of this build), and every target `cargo clippy --all-targets` checks is built by
# `cargo test` (libraries with and without cfg(test), binaries, tests, examples; there are no
# benches). A lint fails the build with clippy's message.
step "cargo clippy -D warnings, while building the tests"
export RUSTC_WORKSPACE_WRAPPER
RUSTC_WORKSPACE_WRAPPER="$(command -v clippy-driver)" || {
  echo "error: no clippy-driver: rustup component add clippy" >&2
  exit 1
}
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# On CI (a fresh clone, built once) incremental caches would only be written, never read.
# A developer's machine keeps them for the next run.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
cargo test --workspace --locked --no-run 2>&1

step "scripts/build-thttpd.sh (thttpd as sthttpd 2.27, into peers/bin; started before the build)"
wait "$thttpd_pid" || {
  cat "$thttpd_log" >&2
  echo "error: scripts/build-thttpd.sh could not build thttpd (above)" >&2
  exit 1
}
cat "$thttpd_log"
rm -f "$thttpd_log"

step "scripts/build-h2spec.sh (h2spec 2.2.1, into peers/bin; started before the build)"
wait "$h2spec_pid" || {
  cat "$h2spec_log" >&2
  echo "error: scripts/build-h2spec.sh could not build h2spec (above)" >&2
  exit 1
}
cat "$h2spec_log"
rm -f "$h2spec_log"

if [ -n "$pip_pid" ]; then
  step "pip install kubernetes-validate (venv $kv; started before the build)"
  wait "$pip_pid" || {
    cat "$pip_log" >&2
    echo "error: pip could not install kubernetes-validate into $kv (above)" >&2
    exit 1
  }
  rm -f "$pip_log"
fi

if [ -n "$fresh_pid" ]; then
  step "mmdebstrap bookworm (the package test's fresh root; started before the build)"
  wait "$fresh_pid" || {
    cat "$fresh_log" >&2
    echo "error: mmdebstrap could not make a fresh Debian 12 root (above)" >&2
    exit 1
  }
  rm -f "$fresh_log"
  export HERD_FRESH_ROOT_TAR="$fresh_root"
fi

step "cargo test"
# Most tests wait on servers, links, timers and child processes: four at a time on any
# machine of fewer cores (herd's integration tests on 2 cores: 123 s with two threads, 85 s
# with four; 108 s with four beside two CPU-burning processes, all passing).
cores=$(nproc)
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-$((cores > 4 ? cores : 4))}"
# The fuzz targets' glue is checked meanwhile, at the lowest priority: the tests leave the
# CPUs idle much of the time, and this takes what they leave (its own target directory, as
# cargo locks the one the tests use). Without libFuzzer (fuzzing itself: fuzz/README.md).
fuzz_log="${TMPDIR:-/tmp}/herd-fuzz-check-$$.log"
(
  unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
  exec nice -n 19 cargo check --manifest-path fuzz/Cargo.toml --locked --quiet \
    --no-default-features --target-dir target/fuzz-check
) >"$fuzz_log" 2>&1 &
fuzz_pid=$!
bg_pids+=("$fuzz_pid")
# Unit, binary and integration tests; no doc tests, as there are none (rustdoc spent 29 s
# finding none in 17 crates; tests/it/tidy.rs keeps doc comments free of them). The examples
# were built and linted above. The test binaries the build made are run as cargo runs them
# (each from its package's directory), with one difference: herd's integration tests
# (tests/it, 2½ minutes, most of it waiting on servers and links) run beside the others
# instead of before them, which saves about 45 s on 2 cores. tests/run_health.rs waits for
# them: its verdicts measure the machine, so it runs alone, as under cargo test.
test_list="${TMPDIR:-/tmp}/herd-test-bins-$$.txt"
list_err="${TMPDIR:-/tmp}/herd-test-bins-$$.err"
cargo test --workspace --locked --no-run --lib --bins --tests --message-format=json 2>"$list_err" |
  python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    exe, target = m.get("executable"), m.get("target", {})
    if m.get("reason") == "compiler-artifact" and exe and m["profile"]["test"]:
        print(os.path.relpath(os.path.dirname(m["manifest_path"])), target.get("name"), exe)
' >"$test_list" || {
  cat "$list_err" >&2
  echo "error: cannot list the test binaries cargo built (above)" >&2
  exit 1
}
rm -f "$list_err"
it_line=$(grep "^crates/herd it " "$test_list" || true)
health_line=$(grep "^crates/herd run_health " "$test_list" || true)
if [ -z "$it_line" ] || [ -z "$health_line" ]; then
  echo "error: no herd it or run_health test binary among those built:" >&2
  cat "$test_list" >&2
  exit 1
fi
failed=()
run_tests() { # DIR NAME EXE
  echo "     Running $1: $2 ($3)"
  (cd "$1" && "$3") || failed+=("$1 $2")
}
it_log="${TMPDIR:-/tmp}/herd-test-it-$$.log"
read -r it_dir it_name it_exe <<<"$it_line"
(cd "$it_dir" && "$it_exe") >"$it_log" 2>&1 &
it_pid=$!
bg_pids+=("$it_pid")
while read -r dir name exe; do
  case "$dir $name" in "crates/herd it" | "crates/herd run_health") continue ;; esac
  run_tests "$dir" "$name" "$exe"
done <"$test_list"
echo "     Running $it_dir: $it_name ($it_exe), beside the above"
wait "$it_pid" || failed+=("$it_dir $it_name")
cat "$it_log"
rm -f "$it_log"
read -r dir name exe <<<"$health_line"
run_tests "$dir" "$name" "$exe"
if [ ${#failed[@]} -gt 0 ]; then
  echo "error: failing tests in: ${failed[*]} (above)" >&2
  exit 1
fi

# The engine's tests, herd run's and herd ab's against real servers, the hostile peers and
# the open-file limit again, with `--io auto` taking io_uring wherever it carries the run
# (HERD_AUTO_IO, see crates/engine/src/io_choice.rs): every one of them on both backends. So
# do herd serve's own tests and h2spec against herd serve, which then serves plain TCP on
# io_uring (crates/serve/src/io_backend.rs), as does every herd serve those tests start. The
# test binaries the step above built are run as they are (a `cargo test -p` would resolve
# features anew and rebuild the dependencies), each from its package's directory as cargo runs
# it: those of the list the step above made. About 40 s.
step "the engine's, herd run's, herd ab's, herd serve's, the hostile peers' and the file limit's tests on io_uring"
if target/debug/herd doctor 2>/dev/null | grep -q "^ok    io_uring: available"; then
  test_bins=$(awk '$1 == "crates/engine" || ($1 == "crates/herd" && ($2 == "it" || $2 == "run_health")) ||
    ($1 == "crates/serve" && $2 == "it")' "$test_list")
  for wanted in "crates/herd it " "crates/herd run_health " "crates/serve it "; do
    case "$test_bins" in
      *"$wanted"*) ;;
      *) echo "error: no ${wanted}test binary among those built: $test_bins" >&2; exit 1 ;;
    esac
  done
  while read -r dir name exe; do
    filters=()
    if [ "$dir $name" = "crates/herd it" ]; then
      filters=(run_cli:: run_h2:: run_h3:: run_html:: run_json_schema:: run_outputs::
        run_servers:: run_workloads:: run_trace:: ab_interrupt:: ab_json:: ab_vs_ab:: hostile:: io_backend::
        serve_h2spec::)
    elif [ "$dir $name" = "crates/herd run_health" ]; then
      # The open-file limit (issue 35: on both backends): connections the ring cannot open.
      filters=(too_few_file_descriptors_are_counted_and_named)
    fi
    echo "$dir: $name (HERD_AUTO_IO=uring)"
    (cd "$dir" && HERD_AUTO_IO=uring "$exe" -q "${filters[@]}")
  done <<<"$test_bins"
else
  why=$(target/debug/herd doctor 2>/dev/null | grep "io_uring:" | head -1)
  echo "the io_uring pass (this kernel: ${why:-no answer from herd doctor})" >>"$HERD_NOT_RUN"
fi
rm -f "$test_list"

step "the fuzz targets build (cargo check, without libFuzzer; started with the tests)"
wait "$fuzz_pid" || {
  cat "$fuzz_log" >&2
  echo "error: the fuzz targets do not build (above)" >&2
  exit 1
}
rm -f "$fuzz_log"

step "bench/floor.c compiles without warnings"
if [ -f bench/floor.c ]; then
  gcc -O2 -Wall -Wextra -Werror -o "${TMPDIR:-/tmp}/herd-floor-check" bench/floor.c
fi

step "bench/check.sh (the bench scripts parse; bench/lib.sh's tool and scenario tables hold)"
bench/check.sh
trap - EXIT
rm -f "$fresh_root"
step_times
if [ -s "$HERD_NOT_RUN" ]; then
  echo
  echo "not run on this machine (each test checked what it could instead):"
  sort -u "$HERD_NOT_RUN" | sed 's/^/  /'
fi
rm -f "$HERD_NOT_RUN"
echo
echo "all checks passed"
