#!/usr/bin/env bash
# The quick start (README): builds herd, then runs the bundled quick-start experiment
# (experiments/quickstart.toml) with `herd lab run`: herd's own server on this machine, its
# CPU time per request at pinned rates (a static page at two rates, two file sizes) and one
# capacity row, each cell until its interval is within ±4.5 % (5 to 10 times), verified
# before measured. No root, nothing else to install. Results go to ./herd-results.db and the
# table is printed; `herd report` prints it again.
# Extra arguments go to `herd lab run` (e.g. --dry-run, --store FILE, or another experiment).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
  echo "error: no Rust toolchain: install one with rustup (https://rustup.rs), then re-run" >&2
  exit 1
fi
cargo build --release --locked -p herd
exec target/release/herd lab run "$@"
