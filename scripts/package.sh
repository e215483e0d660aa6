#!/usr/bin/env bash
# Builds herd's packages from this checkout (issue 36, point 1):
#   OUT/herd_VERSION_ARCH.deb               for `apt install ./herd_VERSION_ARCH.deb`
#   OUT/herd-VERSION-MACHINE-linux.tar.gz   the same files under one directory, for any Linux
#                                           with glibc (bin/, share/)
# Both hold the binary (/usr/bin/herd), a man page for herd and for each of its commands and
# the bash, zsh and fish completions, all made by the binary itself from its command-line
# definitions (`herd man`, `herd completions`); the bundled experiments
# (/usr/share/herd/experiments, which `herd lab run NAME` also has built in); and the docs
# (/usr/share/doc/herd). The .deb depends only on the C libraries the binary links
# (dpkg-shlibdeps): no Rust. Then the container images the cluster docs use:
# scripts/build-images.sh (agent, lab), where buildah or podman is here.
#
# usage: scripts/package.sh
# env:   OUT=target/package   where the packages go
#        HERD_BIN=path        package this herd binary instead of building one (the test
#                             command packages its debug build: a dist build takes minutes)
#        COMPRESS=xz          the .deb's compression (dpkg-deb -Z: xz, gzip, zstd, none)
#        IMAGES=auto          auto: build the images if buildah or podman is here, else say
#                             so; 0: not
# Needs: dpkg-deb, dpkg-shlibdeps (dpkg-dev), objcopy (binutils), gzip: Debian has them.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-target/package}
IMAGES=${IMAGES:-auto}
COMPRESS=${COMPRESS:-xz}

for tool in dpkg-deb dpkg-shlibdeps objcopy gzip; do
  if ! command -v "$tool" >/dev/null; then
    pkg=$tool
    case $tool in dpkg-shlibdeps) pkg=dpkg-dev ;; objcopy) pkg=binutils ;; esac
    echo "error: $tool is missing: apt-get install $pkg" >&2
    exit 1
  fi
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[ -n "$version" ] || { echo "error: no version in Cargo.toml's [workspace.package]" >&2; exit 1; }
arch=$(dpkg --print-architecture)
machine=$(uname -m)

if [ -n "${HERD_BIN:-}" ]; then
  bin=$HERD_BIN
  [ -x "$bin" ] || { echo "error: HERD_BIN=$bin is not an executable" >&2; exit 1; }
else
  cargo build --profile dist --locked -p herd
  bin=target/dist/herd
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/herd-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root

# The files, laid out as installed (FHS); the tarball takes the same tree without usr/.
install -d "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/herd/experiments" \
  "$root/usr/share/doc/herd/docs" "$root/usr/share/bash-completion/completions" \
  "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d"
# Without its debug sections (line tables: tens of MB); symbols stay, for perf and backtraces.
objcopy --strip-debug "$bin" "$root/usr/bin/herd"
chmod 0755 "$root/usr/bin/herd"
"$root/usr/bin/herd" man "$root/usr/share/man/man1" >/dev/null
gzip -9n "$root"/usr/share/man/man1/*.1
"$root/usr/bin/herd" completions bash >"$root/usr/share/bash-completion/completions/herd"
"$root/usr/bin/herd" completions zsh >"$root/usr/share/zsh/vendor-completions/_herd"
"$root/usr/bin/herd" completions fish >"$root/usr/share/fish/vendor_completions.d/herd.fish"
install -m 0644 experiments/*.toml "$root/usr/share/herd/experiments/"
install -m 0644 README.md ARCHITECTURE.md BENCHMARKS.md "$root/usr/share/doc/herd/"
gzip -9nc CHANGELOG.md >"$root/usr/share/doc/herd/changelog.gz"
cp -r docs/. "$root/usr/share/doc/herd/docs/"
license=$(sed -n 's/^license = "\(.*\)"$/\1/p' Cargo.toml | head -1)
cat >"$root/usr/share/doc/herd/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: herd

Files: *
Copyright: the herd maintainers
License: $license
EOF
find "$root" -type d -exec chmod 0755 {} +
find "$root/usr/share" -type f -exec chmod 0644 {} +

# Depends: the shared libraries the binary links, as dpkg-shlibdeps names their packages
# (it wants a debian/control beside it).
mkdir -p "$work/shlibs/debian"
printf 'Source: herd\n\nPackage: herd\nArchitecture: any\n' >"$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/herd" 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "error: dpkg-shlibdeps found no dependencies for herd" >&2; exit 1; }

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: herd
Version: $version
Architecture: $arch
Maintainer: the herd maintainers <herd@example.invalid>
Installed-Size: $size
Depends: $depends
Recommends: nginx-light | nginx
Suggests: apache2-utils, wrk, nghttp2-client, lighttpd, apache2, h2o, linux-perf, samba
Section: net
Priority: optional
Homepage: https://example.invalid/herd
Description: the web-server benchmark lab
 herd measures web servers with evidence instead of opinion: herd ab (ApacheBench, byte for
 byte), herd run (HTTP/1.1, h2, h2c, h3; open and closed loop; latency from the intended
 send), herd serve (a reference server), herd lab (experiments over real servers, results in
 SQLite), herd report and herd cluster (agents merged exactly).
EOF

mkdir -p "$OUT"
deb=$OUT/herd_${version}_${arch}.deb
dpkg-deb --root-owner-group "-Z$COMPRESS" --build "$root" "$deb" >/dev/null

# The tarball: bin/herd and share/… under herd-VERSION/, as a prefix (/usr/local, ~/.local).
tarname=herd-$version-$machine-linux
mkdir -p "$work/$tarname"
cp -a "$root/usr/bin" "$root/usr/share" "$work/$tarname/"
tar=$OUT/$tarname.tar.gz
tar -C "$work" --owner=0 --group=0 --numeric-owner -czf "$tar" "$tarname"

echo "built $deb ($(du -h "$deb" | cut -f1); Depends: $depends)"
echo "built $tar"

case $IMAGES in
  0) ;;
  auto) scripts/build-images.sh "$deb" ;;
  *) echo "error: IMAGES=$IMAGES: say auto or 0" >&2; exit 2 ;;
esac
