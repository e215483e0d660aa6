# Sourced by the scripts that build a peer Debian 12 lacks (build-thttpd.sh, build-h2spec.sh):
# where it goes. `peers_bin NAME [PREFIX]` sets `prefix` and `bin` (PREFIX/bin/NAME), PREFIX
# defaulting to the cargo target directory's peers/ ($CARGO_TARGET_DIR, else
# $CARGO_BUILD_TARGET_DIR, else target/ in the checkout `repo`), where herd and its tests look
# (../peers/bin/ beside the herd executable). Needs the caller's `die` and `repo`.
peers_bin() {
  local name=$1 target
  shift
  if [ $# -gt 1 ]; then
    die "usage: scripts/build-$name.sh [PREFIX]   (installs PREFIX/bin/$name)"
  fi
  if [ $# -eq 1 ]; then
    prefix=$1
  else
    target=${CARGO_TARGET_DIR:-${CARGO_BUILD_TARGET_DIR:-$repo/target}}
    prefix=$target/peers
  fi
  mkdir -p "$prefix/bin" || die "cannot create $prefix/bin"
  prefix=$(cd "$prefix" && pwd)
  bin="$prefix/bin/$name"
}
