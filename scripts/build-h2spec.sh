#!/usr/bin/env bash
# Builds h2spec, the HTTP/2 conformance suite written by others (RFC 9113 and HPACK's RFC
# 7541, github.com/summerwind/h2spec), that herd serve is checked with
# (crates/herd/tests/it/serve_h2spec.rs; docs/serve.md). Debian 12 has no h2spec package.
#
#   scripts/build-h2spec.sh [PREFIX]     installs PREFIX/bin/h2spec
#
# PREFIX defaults to the cargo target directory's peers/ ($CARGO_TARGET_DIR, else
# $CARGO_BUILD_TARGET_DIR, else target/ in this checkout), beside thttpd: the test looks there
# (../peers/bin/h2spec beside the herd executable) unless HERD_H2SPEC names the binary.
#
# The version is pinned in scripts/h2spec/go.mod (h2spec v2.2.1 and what it imports) and
# checked against scripts/h2spec/go.sum; it is fetched as Go modules by the go command (Go
# 1.19 or later: Debian 12's golang-go will do), with its module and build caches under
# PREFIX/../h2spec-go, so nothing is written to $HOME. Does nothing when PREFIX/bin/h2spec
# is already newer than this script and the pinned versions. About 10 s with the modules
# cached, a minute on a fresh machine.
set -euo pipefail

VERSION=2.2.1
# The commit of h2spec's tag v2.2.1, shown by `h2spec --version`.
COMMIT=d7efa68f9617edaf0ddea15bb8814d515b6531b9

die() {
  echo "build-h2spec.sh: $*" >&2
  exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
script="$here/$(basename "$0")"
module="$here/h2spec"
repo=$(cd "$here/.." && pwd)

# shellcheck source=scripts/peers-prefix.sh
source "$(dirname "$0")/peers-prefix.sh"
peers_bin h2spec "$@"

# Already built from these pins by this script: nothing to do.
if [ -x "$bin" ] && [ "$bin" -nt "$script" ] && [ "$bin" -nt "$module/go.mod" ] \
  && [ "$bin" -nt "$module/go.sum" ] \
  && "$bin" --version 2>/dev/null | grep -q "^Version: $VERSION ($COMMIT)"; then
  echo "h2spec $VERSION: $bin (already built)"
  exit 0
fi

# The go command: on the PATH, else where the Go project's and Debian's packages put it.
go=""
for g in "$(command -v go || true)" /usr/local/go/bin/go /usr/lib/go/bin/go; do
  if [ -n "$g" ] && [ -x "$g" ]; then
    go=$g
    break
  fi
done
[ -n "$go" ] || die "building h2spec needs Go 1.19 or later, which this machine lacks:" \
  "apt-get install golang-go (scripts/test.sh installs it as root)"
# go1.19.8 → 1 19; a development build ("devel …") is taken as new enough.
goversion=$("$go" env GOVERSION 2>/dev/null || true)
if [[ $goversion =~ ^go([0-9]+)\.([0-9]+) ]]; then
  major=${BASH_REMATCH[1]}
  minor=${BASH_REMATCH[2]}
  if [ "$major" -lt 1 ] || { [ "$major" -eq 1 ] && [ "$minor" -lt 19 ]; }; then
    die "$go is $goversion; building h2spec needs Go 1.19 or later" \
      "(apt-get install golang-go on Debian 12)"
  fi
fi

cache="$prefix/../h2spec-go"
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
log=$(mktemp "${TMPDIR:-/tmp}/herd-build-h2spec.XXXXXX")
trap 'rm -f "$log"' EXIT
# -mod=readonly: go.mod and go.sum are used as they are, never updated; every module is
# checked against go.sum. GOTOOLCHAIN=local: this Go builds it, none is downloaded.
# -modcacherw: the cache can be removed with rm -rf, like the rest of the target directory.
(
  cd "$module"
  export GOPATH="$cache/gopath" GOMODCACHE="$cache/gopath/pkg/mod" GOCACHE="$cache/build"
  export GOFLAGS="-mod=readonly -modcacherw" GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=0
  "$go" build -trimpath -o "$bin.new" \
    -ldflags "-s -w -X main.VERSION=$VERSION -X main.COMMIT=$COMMIT" \
    github.com/summerwind/h2spec/cmd/h2spec
) >"$log" 2>&1 || {
  tail -n 30 "$log" >&2
  die "building h2spec with $go ($goversion) failed (the end of its log is above)"
}
mv -f "$bin.new" "$bin"
"$bin" --version | grep -q "^Version: $VERSION ($COMMIT)" ||
  die "$bin --version does not say $VERSION: $("$bin" --version 2>&1 || true)"
echo "h2spec $VERSION (built with $goversion): $bin"
