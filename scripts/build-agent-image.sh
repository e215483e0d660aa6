#!/usr/bin/env bash
# Builds herd's agent image (deploy/agent.Containerfile): herd linked statically against
# musl, on an empty base. Usage: scripts/build-agent-image.sh REGISTRY/herd:TAG
# Needs: rustup (for the musl target), musl-tools (musl-gcc, for ring's and SQLite's C), and
# docker, buildah or podman. Not run by the tests (no image builder daemon in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:?usage: scripts/build-agent-image.sh REGISTRY/herd:TAG}
target=x86_64-unknown-linux-musl
command -v musl-gcc >/dev/null || { echo "error: musl-gcc is missing: apt-get install musl-tools" >&2; exit 1; }
rustup target list --installed | grep -qx "$target" || rustup target add "$target"
cargo build --profile dist --locked -p herd --target "$target"
bin=target/$target/dist/herd
if ldd "$bin" >/dev/null 2>&1; then
  echo "error: $bin is dynamically linked; the image has no libc" >&2
  exit 1
fi
builder=$(command -v docker || command -v podman || command -v buildah || true)
if [ -z "$builder" ]; then
  echo "built $bin (static); no docker, podman or buildah here to make the image" >&2
  exit 1
fi
case "$builder" in
  */buildah) "$builder" bud -f deploy/agent.Containerfile -t "$tag" . ;;
  *) "$builder" build -f deploy/agent.Containerfile -t "$tag" . ;;
esac
echo "built $tag; push it and give it by digest: herd cluster run --image ${tag%:*}@sha256:…"
