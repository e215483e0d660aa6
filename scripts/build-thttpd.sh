#!/usr/bin/env bash
# Builds thttpd, seed 002's server, for the lab's `thttpd` driver: sthttpd, the maintained fork
# of thttpd 2.27 (BSD licence, github.com/blueness/sthttpd at 2845bf5, 2017-06-08). Debian 12
# has no thttpd package.
#
#   scripts/build-thttpd.sh [PREFIX]     installs PREFIX/bin/thttpd
#
# PREFIX defaults to the cargo target directory's peers/ ($CARGO_TARGET_DIR, else
# $CARGO_BUILD_TARGET_DIR, else target/ in this checkout): herd looks for thttpd at
# ../peers/bin/thttpd beside its own executable (target/release/herd, target/debug/herd), then
# at /usr/sbin, /usr/local/sbin and /usr/local/bin.
#
# The source is ../shared/vendor/sthttpd-2845bf5.tar.gz beside this checkout (or beside its
# repository's main worktree) when it is there (its sha256 is checked), else that commit's archive from GitHub (curl or wget). Either way
# what it unpacks is checked against the tree pinned below (every file's name and contents)
# before anything is built. Needs gcc, make, autoconf and automake. Does nothing when
# PREFIX/bin/thttpd is already newer than the tarball and this script. About 10-20 s.
set -euo pipefail

COMMIT=2845bf5bff2b820d2336c8c8061cbfc5f271e720
SHORT=${COMMIT:0:7}
# sha256 of vendor/sthttpd-2845bf5.tar.gz (`git archive --prefix=sthttpd-2845bf5/`).
TARBALL_SHA256=0c660669b7e6fb34d3953c785e3b9d3c484605274c676ee45256ce77727a1023
# sha256 of `sha256sum` over every file of the unpacked tree, by path from its top directory
# (LC_ALL=C order): the same for the vendored tarball and GitHub's archive of the commit,
# whatever their compression.
TREE_SHA256=cb88866d6316479028d67984abbca9841c0ee41b271574f9fb3b8e9c983366ec
URL=https://github.com/blueness/sthttpd/archive/$COMMIT.tar.gz
VERSION="sthttpd/2.27.0"

die() {
  echo "build-thttpd.sh: $*" >&2
  exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
script="$here/$(basename "$0")"
repo=$(cd "$here/.." && pwd)
# The vendored tarball beside this checkout, or beside the repository's main worktree when
# this is another worktree of it.
vendored="$repo/../shared/vendor/sthttpd-$SHORT.tar.gz"
if [ ! -f "$vendored" ] && common=$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
  main_vendored="$(dirname "$common")/../shared/vendor/sthttpd-$SHORT.tar.gz"
  if [ -f "$main_vendored" ]; then vendored=$main_vendored; fi
fi

# shellcheck source=scripts/peers-prefix.sh
source "$(dirname "$0")/peers-prefix.sh"
peers_bin thttpd "$@"

# Already built from this source by this script: nothing to do.
if [ -x "$bin" ] && [ "$bin" -nt "$script" ] && { [ ! -f "$vendored" ] || [ "$bin" -nt "$vendored" ]; } \
  && "$bin" -V 2>/dev/null | grep -q "^$VERSION "; then
  echo "thttpd (sthttpd 2.27.0, $SHORT): $bin (already built)"
  exit 0
fi

missing=()
command -v gcc >/dev/null || missing+=(gcc)
command -v make >/dev/null || missing+=(make)
{ command -v autoconf >/dev/null && command -v autoheader >/dev/null; } || missing+=(autoconf)
{ command -v automake >/dev/null && command -v aclocal >/dev/null; } || missing+=(automake)
if [ ${#missing[@]} -gt 0 ]; then
  die "building thttpd needs ${missing[*]}, which this machine lacks: apt-get install ${missing[*]} (scripts/test.sh installs them as root)"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/herd-build-thttpd.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -f "$vendored" ]; then
  tarball=$vendored
  got=$(sha256sum "$tarball" | cut -d' ' -f1)
  [ "$got" = "$TARBALL_SHA256" ] ||
    die "$tarball has sha256 $got, not $TARBALL_SHA256: it is not sthttpd at $SHORT; remove it to download that commit instead"
  from="$tarball"
else
  tarball="$work/sthttpd-$COMMIT.tar.gz"
  echo "no $vendored: downloading $URL"
  if command -v curl >/dev/null; then
    curl -fsSL --retry 2 -o "$tarball" "$URL" || die "cannot download $URL (curl failed above); or put the tarball at $vendored"
  elif command -v wget >/dev/null; then
    wget -q -O "$tarball" "$URL" || die "cannot download $URL (wget failed above); or put the tarball at $vendored"
  else
    die "no $vendored and neither curl nor wget to download $URL: apt-get install curl, or put the tarball there"
  fi
  from="$URL"
fi

mkdir "$work/src"
tar -xzf "$tarball" -C "$work/src" || die "cannot unpack $tarball"
tops=("$work"/src/*)
[ ${#tops[@]} -eq 1 ] && [ -d "${tops[0]}" ] ||
  die "$tarball does not hold one top directory (as git archive writes it): not sthttpd's source"
top=${tops[0]}
[ -f "$top/src/thttpd.c" ] && [ -x "$top/autogen.sh" ] ||
  die "$tarball has no src/thttpd.c or autogen.sh under $(basename "$top")/: not sthttpd's source"
tree=$(cd "$top" && LC_ALL=C find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
[ "$tree" = "$TREE_SHA256" ] ||
  die "the files unpacked from $from are not sthttpd at $COMMIT (tree sha256 $tree, expected $TREE_SHA256)"

log="$work/build.log"
build() {
  (cd "$top" && "$@") >>"$log" 2>&1 || {
    tail -n 30 "$log" >&2
    die "building thttpd failed at \`$*\` (the end of its log is above)"
  }
}
build ./autogen.sh
build ./configure
build make -C src -j"$(nproc)" thttpd
install -m 755 "$top/src/thttpd" "$bin.new"
mv -f "$bin.new" "$bin"
"$bin" -V | grep -q "^$VERSION " || die "$bin -V does not say $VERSION: $("$bin" -V 2>&1 || true)"
echo "thttpd (sthttpd 2.27.0, $SHORT, from $from): $bin"
