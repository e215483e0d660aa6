#!/usr/bin/env bash
# The quick start (README): builds herd, starts the built-in server on a free loopback port
# with a 6397-byte page (the size of seed 000's page), and benchmarks it with herd ab, as
# `ab -n 100000 -c 100 -k` would. No root needed. Everything it starts, it stops.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
  echo "error: no Rust toolchain: install one with rustup (https://rustup.rs), then re-run" >&2
  exit 1
fi
cargo build --release --locked -p herd
herd=target/release/herd

root=$(mktemp -d)
log=$(mktemp)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$root" "$log"
}
trap cleanup EXIT INT TERM
head -c 6397 /dev/zero | tr '\0' 'x' > "$root/index.html"

"$herd" serve --listen 127.0.0.1:0 --root "$root" >"$log" 2>&1 &
server=$!
for _ in $(seq 100); do
  grep -q "^listening on " "$log" && break
  sleep 0.05
done
url=$(sed -n 's/^listening on \(http:\/\/[^ ]*\).*/\1/p' "$log" | head -1)
[ -n "$url" ] || { echo "error: herd serve did not start:" >&2; cat "$log" >&2; exit 1; }

"$herd" ab -n "${REQUESTS:-100000}" -c "${CONCURRENCY:-100}" -k "${url%/}/index.html"
