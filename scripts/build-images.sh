#!/usr/bin/env bash
# Builds herd's container images from the .deb scripts/package.sh made, without a registry:
#   herd-agent:VERSION  herd and the C libraries it links, nothing else: the agent image of
#                       `herd cluster run --image` (docs/cluster.md); it runs as nobody
#   herd-lab:VERSION    Debian 12, herd installed from the .deb, and the servers and clients
#                       the bundled experiments run: `herd lab run`
# Each image's root file system is made from Debian's packages by mmdebstrap
# (DIR/agent-rootfs.tar, DIR/lab-rootfs.tar, DIR being the .deb's directory); the recipes,
# deploy/agent.Containerfile and deploy/lab.Containerfile, add it to an empty base, so
# buildah, podman and docker all build the same image from them. With buildah or podman here
# the images are built and saved as OCI archives (DIR/herd-agent-VERSION.oci.tar, …); without,
# the root file systems are still made and the recipes checked against them, and the script
# says how to build the images elsewhere.
#
# usage: scripts/build-images.sh DEB          (scripts/package.sh calls it)
#        scripts/build-images.sh --check DEB  only check the recipes against the .deb: each
#                                             names an archive this script makes and an
#                                             entrypoint the .deb installs (no mmdebstrap)
#        scripts/build-images.sh --agent-rootfs DEB
#                                             only the agent's root file system, beside the
#                                             .deb (scripts/k8s-e2e.sh builds its images)
# Needs: mmdebstrap (Debian's package of that name), run as root (it installs packages into
# the lab's root); buildah or podman to build the images.
set -euo pipefail
cd "$(dirname "$0")/.."

check_only=0
agent_rootfs_only=0
case "${1:-}" in
  --check) check_only=1; shift ;;
  --agent-rootfs) agent_rootfs_only=1; shift ;;
  -*)
    echo "error: $1: no such option (usage: scripts/build-images.sh [--check | --agent-rootfs] DEB)" >&2
    exit 2
    ;;
esac
deb=${1:?usage: scripts/build-images.sh [--check | --agent-rootfs] DEB}
[ -f "$deb" ] || { echo "error: $deb: no such .deb (scripts/package.sh makes one)" >&2; exit 1; }
dir=$(cd "$(dirname "$deb")" && pwd)
deb=$dir/$(basename "$deb")
version=$(dpkg-deb -f "$deb" Version)

# The recipes: each adds the archive this script makes for it and runs /usr/bin/herd, which
# the .deb installs.
check_recipe() { # NAME
  local recipe=deploy/$1.Containerfile
  [ -f "$recipe" ] || { echo "error: $recipe is missing" >&2; exit 1; }
  grep -qx "FROM scratch" "$recipe" || { echo "error: $recipe: not FROM scratch" >&2; exit 1; }
  grep -qx "ADD $1-rootfs.tar /" "$recipe" ||
    { echo "error: $recipe does not ADD $1-rootfs.tar, the archive this script makes" >&2; exit 1; }
  grep -qx 'ENTRYPOINT \["/usr/bin/herd"\]' "$recipe" ||
    { echo "error: $recipe's ENTRYPOINT is not /usr/bin/herd" >&2; exit 1; }
}
files=$(dpkg-deb -c "$deb")
grep -q ' \./usr/bin/herd$' <<<"$files" ||
  { echo "error: $deb does not install /usr/bin/herd" >&2; exit 1; }
check_recipe agent
check_recipe lab
if [ $check_only = 1 ]; then
  echo "recipes checked: deploy/agent.Containerfile, deploy/lab.Containerfile"
  exit 0
fi

command -v mmdebstrap >/dev/null || { echo "error: mmdebstrap is missing: apt-get install mmdebstrap" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "error: the images' root file systems need root (mmdebstrap installs packages)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/herd-images.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The agent's root: libc6 and libgcc-s1 unpacked (no dpkg, no shell), herd from the .deb.
mmdebstrap --variant=extract --include=libc6,libgcc-s1 --quiet bookworm "$work/agent"
rm -rf "$work/agent/usr/share/doc" "$work/agent/usr/share/locale" "$work/agent/usr/share/man" \
  "$work/agent/usr/lib/x86_64-linux-gnu/gconv" "$work/agent/var/cache/apt"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work/agent" ./usr/bin/herd
ln -s usr/bin/herd "$work/agent/herd"
tar -C "$work/agent" --numeric-owner -cf "$dir/agent-rootfs.tar" .
[ -x "$work/agent/usr/bin/herd" ] || { echo "error: no herd in the agent's root" >&2; exit 1; }
if [ $agent_rootfs_only = 1 ]; then
  echo "made $dir/agent-rootfs.tar ($(du -h "$dir/agent-rootfs.tar" | cut -f1))"
  exit 0
fi

# The lab's root: Debian with apt, the peers, and herd installed from the .deb by apt.
mmdebstrap --variant=apt --quiet \
  --include=nginx-light,apache2,lighttpd,h2o,caddy,mini-httpd,apache2-utils,wrk,nghttp2-client,curl,iproute2,nftables,procps,ca-certificates \
  --customize-hook="copy-in $deb /tmp" \
  --customize-hook="chroot \"\$1\" apt-get install -y -qq /tmp/$(basename "$deb") >/dev/null" \
  --customize-hook="rm -f \"\$1/tmp/$(basename "$deb")\"" \
  --customize-hook="mkdir -p \"\$1/work\"" \
  bookworm "$dir/lab-rootfs.tar"
echo "made $dir/agent-rootfs.tar ($(du -h "$dir/agent-rootfs.tar" | cut -f1)) and $dir/lab-rootfs.tar ($(du -h "$dir/lab-rootfs.tar" | cut -f1))"

builder=$(command -v buildah || command -v podman || true)
if [ -z "$builder" ]; then
  echo "images: no buildah or podman here; the recipes are checked. Build them elsewhere with"
  echo "  buildah bud -f deploy/agent.Containerfile -t herd-agent:$version $dir  (and lab)"
  exit 0
fi
for name in agent lab; do
  tag=herd-$name:$version
  case $builder in
    */buildah) buildah bud -q -f "deploy/$name.Containerfile" -t "$tag" "$dir" >/dev/null ;;
    *) podman build -q -f "deploy/$name.Containerfile" -t "$tag" "$dir" >/dev/null ;;
  esac
  rm -f "$dir/herd-$name-$version.oci.tar"
  "$builder" push -q "$tag" "oci-archive:$dir/herd-$name-$version.oci.tar" 2>/dev/null ||
    "$builder" push "$tag" "oci-archive:$dir/herd-$name-$version.oci.tar" >/dev/null
  echo "built $tag: $dir/herd-$name-$version.oci.tar ($(du -h "$dir/herd-$name-$version.oci.tar" | cut -f1))"
done
