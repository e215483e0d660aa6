#!/usr/bin/env bash
# The opt-in end-to-end check of `herd cluster run --agents N` on a real Kubernetes cluster:
# real control plane, real kubelets, real containers (never in CI, nor in the test command).
#
#   HERD_K8S_E2E=1 scripts/k8s-e2e.sh            # as root, on Debian 12
#
# What runs, all on this one machine:
# - etcd, kube-apiserver, kube-controller-manager (the real Job controller), kube-scheduler,
#   kubelet and CoreDNS (the cluster's DNS), built from the Go modules the proxy serves. The
#   first run builds them: ~15 min on 2 cores from empty Go caches, ~620 MB of binaries kept in
#   ~/.cache/herd-k8s-e2e (HERD_K8S_CACHE moves it). Later runs take about a minute, plus
#   herd's own build.
# - Three nodes, herd-e2e-c0..c2: each a real kubelet over a containerd of its own (Debian's
#   containerd and runc; kubelets sharing one would remove each other's containers), with a
#   node address 198.18.0.1..3 and a cgroup root of its own. One setting is not obvious:
#   `restrict_oom_score_adj = true` in containerd (root in this VM lacks CAP_SYS_RESOURCE, and
#   every pod sandbox fails without it). The pods share one bridge (the CNI bridge plugin,
#   198.19.0.0/16, no gateway: they reach nothing outside it), where CoreDNS answers on
#   198.19.0.1 and herd serve, the target, listens in a namespace of its own, 198.19.255.100.
# - The packaged agent image: this checkout's .deb (scripts/package.sh), its root file system
#   made as scripts/build-images.sh makes it, built from deploy/agent.Containerfile by buildah
#   and imported into each node's containerd as herd:e2e (no registry). herd:e2e-bad is the
#   same image with busybox's sh, its /herd a script that makes agent 1 exit 3 and runs herd
#   in the others: the failure check 2 needs, a real container's exit.
# Then, with the user-facing command and the real kubectl:
#   1. a good run: the Job completes, three agents on three distinct nodes (anti-affinity),
#      agents 1 and 2 find agent 0 through the headless Service (CoreDNS's answers checked),
#      herd prints the merged result (read from agent 0's log: `kubectl logs`, through its
#      kubelet), whose count is herd serve's own;
#   2. agent 1 exits 3: the pod failure policy fails the Job, herd says which agent and what
#      it said last (its log, read with `kubectl logs` before its pod is deleted), exit 1;
#   3. nothing left: no Job, Service or pod of herd's. After its own clean-up the script
#      checks the host: no link, namespace, cgroup, mount or process of the run's, the
#      sysctls kubelet sets put back, the paths it and containerd use whatever they are told
#      removed when they were not there before.
# What it cannot show: image pulls from a registry (the images are imported), kube-proxy and
# Service IPs (none run; a headless Service needs neither), a network between machines,
# resource limits and the static CPU manager (the runs set no --cpus or --memory), host
# networking (--host-network), and cgroup v2 (this kernel mounts v1).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${HERD_K8S_E2E:-}" = 1 ] ||
  { echo "opt-in: HERD_K8S_E2E=1 $0 (builds a cluster: ~15 min the first time)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "error: needs root (kubelets, containers, network namespaces)" >&2; exit 1; }
command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
need() { # TOOL HOW
  command -v "$1" >/dev/null || [ -x "$1" ] || { echo "error: $1 is missing: $2" >&2; exit 1; }
}
need go "install Go 1.24 or later from go.dev/dl into /usr/local/go (Debian 12's golang-go is 1.19)"
need kubectl "install kubectl (the kubectl package of pkgs.k8s.io's apt repository)"
need cargo "install Rust with rustup (README)"
for t in openssl:openssl python3:python3 ip:iproute2 ss:iproute2 curl:curl containerd:containerd \
  ctr:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins \
  /usr/lib/cni/host-local:containernetworking-plugins busybox:busybox-static buildah:buildah \
  mmdebstrap:mmdebstrap dpkg-shlibdeps:dpkg-dev objcopy:binutils; do
  need "${t%%:*}" "apt-get install ${t#*:}"
done
ldd "$(command -v busybox)" >/dev/null 2>&1 &&
  { echo "error: busybox is linked dynamically: apt-get install busybox-static" >&2; exit 1; }

K8S=v1.34.4; STAGING=v0.34.4; ETCD=v3.6.16; COREDNS=v1.12.1
NODES=3
cache=${HERD_K8S_CACHE:-$HOME/.cache/herd-k8s-e2e}
bin=$cache/bin
mkdir -p "$bin"
t0=$SECONDS
step() { printf '\n==> [%ds] %s\n' $((SECONDS - t0)) "$*"; }

# Host-wide names, none with herd's `herd-` prefix (the lab's clean-up owns those).
PODS_BR=k8se2e-pods    # the pods' bridge, 198.19.0.1/16 (CoreDNS there)
NODES_BR=k8se2e-nodes  # empty, holds the node addresses 198.18.0.1..3/32
SRV_NS=k8se2e-srv      # herd serve's namespace, 198.19.255.100 on the pods' bridge
CG=k8se2e-c            # cgroup roots /k8se2e-c0.. in every v1 hierarchy
SERVER=198.19.255.100
DNS=198.19.0.1
# Ports on 127.0.0.1, away from the defaults a cluster already on this host would hold;
# kubelet i serves its health on 10348+i (and its API on 10250 of its node address).
ETCD_PORT=23791; ETCD_PEER=23801; API_PORT=16444; KCM_PORT=10267; SCHED_PORT=10269

build_k8s() {
  local cmd missing=0
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
    [ -x "$bin/$cmd" ] || missing=1
  done
  [ $missing = 1 ] || return 0
  step "building kube-apiserver, kube-controller-manager, kube-scheduler, kubelet $K8S (~11 min)"
  local d=$cache/k8sbuild
  mkdir -p "$d" && cd "$d"
  printf 'module example.invalid/k8sbuild\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n' "$K8S" > go.mod
  go mod download "k8s.io/kubernetes@$K8S"
  # k8s.io/kubernetes replaces its staging modules with ./staging paths; point those at the
  # published staging versions instead.
  sed -n '/^replace/,/^)/p' "$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S/go.mod" \
    | sed -E "s#=> \./staging/src/(k8s.io/[a-z0-9-]+)#=> \1 $STAGING#" >> go.mod
  printf '//go:build tools\npackage tools\nimport (\n _ "k8s.io/kubernetes/cmd/kube-apiserver"\n _ "k8s.io/kubernetes/cmd/kube-controller-manager"\n _ "k8s.io/kubernetes/cmd/kube-scheduler"\n _ "k8s.io/kubernetes/cmd/kubelet"\n)\n' > tools.go
  go mod tidy
  local minor=${K8S#v1.}; minor=${minor%%.*}
  local ld="-X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
    [ -x "$bin/$cmd" ] || go build -ldflags "$ld" -o "$bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
  done
  cd - >/dev/null
}

build_etcd() {
  [ -x "$bin/etcd" ] && return
  step "building etcd $ETCD (~1 min)"
  local d=$cache/etcdbuild
  mkdir -p "$d" && cd "$d"
  printf 'module example.invalid/etcdbuild\n\ngo 1.24.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD" > go.mod
  printf '//go:build tools\npackage tools\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
  go mod tidy
  go build -o "$bin/etcd" go.etcd.io/etcd/server/v3
  cd - >/dev/null
}

build_coredns() {
  [ -x "$bin/coredns" ] && return
  step "building CoreDNS $COREDNS (~3 min)"
  GOBIN=$bin go install "github.com/coredns/coredns@$COREDNS"
}

# --- what the host looks like before: checked against after the clean-up ------------------
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward)
# Paths used whatever the programs are told (kubelet's device-plugin socket and
# /var/log/containers, libcni's cache, containerd's shim sockets, buildah's blob-info cache):
# removed after the run only when they did not exist before it.
HOST_PATHS=(/var/lib/kubelet /var/lib/kubelet/device-plugins/kubelet.sock /var/log/containers
  /var/log/pods /var/lib/cni /run/containerd /var/lib/containers)
# Paths the defaults would use and the settings here move (containerd's opt, kubelet's and the
# controller-manager's flex-volume directory, buildah's CNI directory): checked, never removed.
CHECK_PATHS=(/opt/containerd /usr/libexec/kubernetes /etc/cni /etc/kubernetes /opt/cni
  /var/lib/containerd /run/containers "$HOME/.kube/cache/discovery/127.0.0.1_$API_PORT")
ours_on_host() { # what of ours is on the host now, one line each
  ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep '^k8se2e-' | sed 's/^/link /' || true
  ip netns list | awk '{print $1}' | grep '^k8se2e-' | sed 's/^/netns /' || true
  find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d -name "$CG*" | sed 's/^/cgroup /' || true
  [ -z "${run:-}" ] || grep -F " $run/" /proc/mounts | awk '{print "mount " $2}' || true
  local s
  for s in "${SYSCTLS[@]}"; do echo "sysctl $s = $(sysctl -n "$s")"; done
  for s in "${HOST_PATHS[@]}" "${CHECK_PATHS[@]}"; do [ ! -e "$s" ] || echo "path $s"; done
  # `ip netns add` makes /run/netns, bind-mounted onto itself, the first time on a host.
  [ ! -e /run/netns ] || echo "path /run/netns"
  ! mountpoint -q /run/netns || echo "mount /run/netns"
}
before=$(ours_on_host)
if grep -qE '^(link|netns|cgroup) ' <<<"$before"; then
  echo "error: an earlier run's leftovers are on this host (remove them, or reboot):" >&2
  grep -E '^(link|netns|cgroup) ' <<<"$before" >&2
  exit 1
fi
for port in $ETCD_PORT $ETCD_PEER $API_PORT $KCM_PORT $SCHED_PORT $(seq 10348 $((10348 + NODES - 1))); do
  if ss -Htln "sport = :$port" | grep -q .; then
    echo "error: port $port is taken: another run of this script?" >&2; exit 1
  fi
done
declare -A sysctl_before
for s in "${SYSCTLS[@]}"; do sysctl_before[$s]=$(sysctl -n "$s"); done
declare -A path_before
for p in "${HOST_PATHS[@]}"; do [ -e "$p" ] && path_before[$p]=1; done

build_k8s; build_etcd; build_coredns
step "building herd"
cargo build --release --locked -p herd --quiet
target=${CARGO_TARGET_DIR:-target}
HERD=$(cd "$target" && pwd)/release/herd

run=$(mktemp -d /tmp/herd-k8s-e2e.XXXXXX)
chmod 0755 "$run"
mkdir -p "$run/logs" "$run/tmp"
export TMPDIR=$run/tmp
# kubectl's discovery cache stays in the run's directory, not in ~/.kube.
export KUBECACHEDIR=$run/kube-cache
declare -A pid_of

# Starts a daemon in a session of its own (a Ctrl-C reaches this script, which stops the
# daemons in order) and notes its PID.
start() { # NAME COMMAND...
  local name=$1; shift
  setsid "$@" > "$run/logs/$name.log" 2>&1 < /dev/null &
  pid_of[$name]=$!
}
# SIGTERM, up to 20 s, then SIGKILL: only the PID this script started.
stop() { # NAME...
  local name p i
  for name in "$@"; do
    p=${pid_of[$name]:-}
    [ -n "$p" ] || continue
    kill "$p" 2>/dev/null || true
  done
  for name in "$@"; do
    p=${pid_of[$name]:-}
    [ -n "$p" ] || continue
    for i in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then
      echo "cleanup: $name ($p) still runs 20 s after SIGTERM: SIGKILL" >&2
      kill -KILL "$p" 2>/dev/null || true
    fi
    wait "$p" 2>/dev/null || true
    unset "pid_of[$name]"
    : "$i"
  done
}
ctr_n() { ctr -a "$run/n$1/containerd/containerd.sock" -n k8s.io "${@:2}"; }

cleanup() {
  local code=$? i s p
  set +e
  trap '' INT TERM
  step "clean-up"
  # 1. The pods, deleted through the API while the kubelets run (CNI DEL, sandboxes gone).
  for p in "${!pid_of[@]}"; do [[ $p = watch* ]] && stop "$p"; done
  if [ -n "${pid_of[kube-apiserver]:-}" ] && kubectl get --raw /readyz >/dev/null 2>&1; then
    kubectl delete jobs,services -l herd.dev/run --wait=false >/dev/null 2>&1
    kubectl delete pods --all --grace-period=1 --wait=false >/dev/null 2>&1
    for i in $(seq 60); do
      [ -z "$(kubectl get pods --no-headers 2>/dev/null)" ] && break
      sleep 1
    done
  fi
  # 2. The kubelets, then the control plane and DNS.
  for i in $(seq 0 $((NODES - 1))); do stop "kubelet-$i"; done
  stop coredns kube-scheduler kube-controller-manager kube-apiserver etcd serve
  # 3. Whatever containers remain in each containerd, then the containerds; shims left
  #    by them (started from this run's directory) last.
  for i in $(seq 0 $((NODES - 1))); do
    [ -n "${pid_of[containerd-$i]:-}" ] || continue
    for s in $(ctr_n "$i" tasks ls -q 2>/dev/null); do ctr_n "$i" tasks kill -s SIGKILL "$s" >/dev/null 2>&1; done
    sleep 0.5
    for s in $(ctr_n "$i" tasks ls -q 2>/dev/null); do ctr_n "$i" tasks delete -f "$s" >/dev/null 2>&1; done
    for s in $(ctr_n "$i" containers ls -q 2>/dev/null); do ctr_n "$i" containers rm "$s" >/dev/null 2>&1; done
    stop "containerd-$i"
  done
  # (The pattern's [n] keeps grep from finding itself.)
  grep -lsE "$run/[n]" /proc/[0-9]*/cmdline | cut -d/ -f3 | while read -r p; do
    echo "cleanup: stopping $p, started from this run: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)" >&2
    kill -KILL "$p" 2>/dev/null
  done
  # 4. Mounts under the run (kubelet bind-mounts its root dir; sandboxes' netns and shm),
  #    deepest first.
  for i in 1 2 3; do
    grep -F " $run/" /proc/mounts | awk '{print $2}' | sort -r |
      while read -r p; do umount "$p" 2>/dev/null || umount -l "$p"; done
  done
  # 5. Network: the server's namespace, the bridges (the pods' veths went with their netns:
  #    any still on the bridge now is checked for after).
  local stray
  stray=$(ip -o link show master "$PODS_BR" 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -vx "${SRV_NS}0")
  ip netns delete "$SRV_NS" 2>/dev/null
  ip link delete "$PODS_BR" 2>/dev/null
  ip link delete "$NODES_BR" 2>/dev/null
  # /run/netns and its mount, when this run's `ip netns add` made them and no one has a
  # namespace there now (umount fails while one is mounted in it).
  if [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
    grep -qx 'mount /run/netns' <<<"$before" || ! mountpoint -q /run/netns || umount /run/netns
    grep -qx 'path /run/netns' <<<"$before" || rmdir /run/netns 2>/dev/null
  fi
  # 6. cgroups, deepest first, in every hierarchy (runc mirrors them into cgroup2's too).
  for i in 1 2 3; do
    find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d -name "$CG*" -print0 2>/dev/null |
      xargs -0 -r -I@ find @ -depth -type d -exec rmdir '{}' ';' 2>/dev/null
    [ -z "$(find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d -name "$CG*")" ] && break
    sleep 1
  done
  # 7. The sysctls kubelet sets (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops;
  #    net.ipv4.ip_forward, which the bridge plugin sets for a gateway, in case), and the paths
  #    used outside the run's.
  for s in "${SYSCTLS[@]}"; do
    [ "$(sysctl -n "$s")" = "${sysctl_before[$s]}" ] || sysctl -qw "$s=${sysctl_before[$s]}"
  done
  # Never into a file system still mounted below (an umount that failed above).
  for p in "${HOST_PATHS[@]}"; do [ -n "${path_before[$p]:-}" ] || rm -rf --one-file-system "$p"; done
  rm -rf --one-file-system "$run"
  # 8. The host as before?
  local after left=""
  after=$(ours_on_host)
  [ "$after" = "$before" ] || left=$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')
  if [ -n "$(ls -A /run/netns 2>/dev/null)" ] && grep -q ' /run/netns$' <<<"$left"; then
    echo "(/run/netns stays: others' namespaces are in it: $(find /run/netns -mindepth 1 -maxdepth 1 -printf '%f '))"
    left=$(grep -v ' /run/netns$' <<<"$left")
  fi
  for p in $stray; do ip link show "$p" >/dev/null 2>&1 && left+=$'\n'"link $p (a pod's veth)"; done
  for p in "${pid_of[@]}"; do kill -0 "$p" 2>/dev/null && left+=$'\n'"process $p"; done
  if [ -n "$left" ]; then
    echo "cleanup: the host is NOT as before:" >&2
    echo "$left" >&2
    [ "$code" != 0 ] || code=1
  else
    echo "the host is as before: no link, namespace, cgroup, mount or process of the run's; sysctls and paths as they were"
  fi
  echo "took $((SECONDS - t0)) s in all"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
  echo "FAILED: $*" >&2
  for f in "$run"/logs/*.log; do echo "--- $f"; tail -15 "$f"; done >&2
  exit 1
}

step "the agent images: the .deb, its root file system, deploy/agent.Containerfile (buildah)"
img=$run/img
mkdir -p "$img/agent" "$img/bad" "$img/pause"
OUT=$img/pkg HERD_BIN=$HERD COMPRESS=none IMAGES=0 scripts/package.sh
debs=("$img"/pkg/herd_*.deb)
deb=${debs[0]}
# The agent's root, made by scripts/build-images.sh (which checks both recipes first):
# libc6 and libgcc-s1 unpacked, herd from the .deb.
scripts/build-images.sh --agent-rootfs "$deb"
mv "$img/pkg/agent-rootfs.tar" "$img/agent/agent-rootfs.tar"
root=$img/agent-root
mkdir -p "$root"
tar -C "$root" -xf "$img/agent/agent-rootfs.tar"
# herd:e2e-bad: the same root, with busybox's sh, and /herd a script that makes agent 1
# exit 3 and runs herd in the others.
rm "$root/herd"
mkdir -p "$root/bin"
cp "$(command -v busybox)" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cat > "$root/herd" <<'EOF'
#!/bin/sh
# herd:e2e-bad (scripts/k8s-e2e.sh): agent 1 fails, exit 3; every other agent is herd.
if [ "$JOB_COMPLETION_INDEX" = 1 ]; then
  echo "k8s-e2e: agent 1 of $HERD_AGENTS exits 3, on purpose" >&2
  exit 3
fi
exec /usr/bin/herd "$@"
EOF
chmod 0755 "$root/herd"
tar -C "$root" --numeric-owner -cf "$img/bad/agent-rootfs.tar" .
# The pods' sandbox ("pause") image: busybox's sleep.
mkdir -p "$img/pause-root/bin"
cp "$(command -v busybox)" "$img/pause-root/bin/busybox"
ln -s busybox "$img/pause-root/bin/sleep"
tar -C "$img/pause-root" --numeric-owner -cf "$img/pause/pause-rootfs.tar" .
printf 'FROM scratch\nADD pause-rootfs.tar /\nENTRYPOINT ["/bin/sleep", "2147483647"]\n' > "$img/pause/Containerfile"
# buildah's storage and CNI directory in the run's directory (only its blob-info cache goes
# to /var/lib/containers, as root, whatever it is told).
printf '[network]\nnetwork_config_dir = "%s"\n' "$img/cni" > "$img/containers.conf"
bah() {
  CONTAINERS_CONF=$img/containers.conf buildah --root "$img/storage" --runroot "$img/storage-run" \
    --storage-driver vfs "$@"
}
build_image() { # CONTEXT CONTAINERFILE TAG
  bah bud -q --isolation chroot -f "$2" -t "localhost/k8s-e2e-build:$3" "$1" >/dev/null
  bah push -q "localhost/k8s-e2e-build:$3" "oci-archive:$img/$3.oci.tar:$3" 2>/dev/null ||
    bah push "localhost/k8s-e2e-build:$3" "oci-archive:$img/$3.oci.tar:$3" >/dev/null
}
build_image "$img/agent" deploy/agent.Containerfile e2e
build_image "$img/bad" deploy/agent.Containerfile e2e-bad
build_image "$img/pause" "$img/pause/Containerfile" pause
du -h "$img"/*.oci.tar

step "the network: node addresses, the pods' bridge, herd serve beside the pods"
ip link add "$NODES_BR" type bridge
for i in $(seq 0 $((NODES - 1))); do ip addr add "198.18.0.$((i + 1))/32" dev "$NODES_BR"; done
ip link set "$NODES_BR" up
# Made here, with its address 198.19.0.1, so that CoreDNS and the server are on it before the
# first pod; the CNI plugin takes it as it is (isGateway false: no forwarding, no default
# route in the pods: they reach only this /16).
ip link add "$PODS_BR" type bridge
ip addr add "$DNS/16" dev "$PODS_BR"
ip link set "$PODS_BR" up
ip netns add "$SRV_NS"
ip -n "$SRV_NS" link set lo up
ip link add "${SRV_NS}0" type veth peer name eth0 netns "$SRV_NS"
ip link set "${SRV_NS}0" master "$PODS_BR"
ip link set "${SRV_NS}0" up
ip -n "$SRV_NS" addr add "$SERVER/16" dev eth0
ip -n "$SRV_NS" link set eth0 up
start serve ip netns exec "$SRV_NS" "$HERD" serve --listen "$SERVER:8080"

step "the control plane"
pki=$run/pki; mkdir -p "$pki"
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
echo 'herd-admin-token,herd-admin,1000,system:masters' > "$pki/tokens.csv"
cat > "$run/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "https://127.0.0.1:$API_PORT", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: herd-admin-token}}]
contexts: [{name: e2e, context: {cluster: e2e, user: admin, namespace: default}}]
current-context: e2e
EOF
export KUBECONFIG=$run/kubeconfig
start etcd "$bin/etcd" --data-dir "$run/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-cluster "default=http://127.0.0.1:$ETCD_PEER"
# The service range is unused (no kube-proxy, herd's Service is headless); it is in
# 198.18.0.0/15 all the same.
start kube-apiserver "$bin/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" --cert-dir="$pki" \
  --token-auth-file="$pki/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=198.18.128.0/24 --disable-admission-plugins=ServiceAccount \
  --endpoint-reconciler-type=none --kubelet-preferred-address-types=InternalIP
for _ in $(seq 120); do kubectl get --raw /readyz >/dev/null 2>&1 && break; sleep 1; done
kubectl get --raw /readyz >/dev/null || fail "kube-apiserver is not ready after 120 s"
start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$KUBECONFIG" \
  --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
  --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false \
  --service-account-private-key-file="$pki/sa.key" --flex-volume-plugin-dir="$run/flex-volume" \
  --controllers='*,-nodeipam,-serviceaccount-token,-bootstrapsigner,-tokencleaner'
start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$KUBECONFIG" \
  --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
  --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --leader-elect=false
cat > "$run/Corefile" <<EOF
.:53 {
    bind $DNS
    errors
    log
    kubernetes cluster.local {
        kubeconfig $KUBECONFIG e2e
    }
}
EOF
start coredns "$bin/coredns" -conf "$run/Corefile"

step "$NODES nodes: a containerd and a kubelet each"
cgroup_hierarchies=(cpu cpuacct cpuset memory devices freezer blkio pids systemd)
for i in $(seq 0 $((NODES - 1))); do
  n=$run/n$i
  mkdir -p "$n/containerd" "$n/cni/net.d" "$n/pod-logs" "$n/kubelet"
  # kubelet refuses a cgroup root missing from any hierarchy.
  for h in "${cgroup_hierarchies[@]}"; do mkdir "/sys/fs/cgroup/$h/$CG$i"; done
  cat /sys/fs/cgroup/cpuset/cpuset.cpus > "/sys/fs/cgroup/cpuset/$CG$i/cpuset.cpus"
  cat /sys/fs/cgroup/cpuset/cpuset.mems > "/sys/fs/cgroup/cpuset/$CG$i/cpuset.mems"
  cat > "$n/containerd/config.toml" <<EOF
version = 2
root = "$n/containerd/root"
state = "$n/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "$n/containerd/containerd.sock"
[ttrpc]
  address = "$n/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$n/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/herd:pause"
  disable_apparmor = true
  # Root here lacks CAP_SYS_RESOURCE: the -998 that containerd gives the sandbox would fail
  # every pod ("can't get final child's PID from pipe: EOF"). Clamped to containerd's own.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$n/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$n/cni/net.d"
    max_conf_num = 1
EOF
  # One subnet on one bridge; each node its own quarter of it to hand out.
  cat > "$n/cni/net.d/10-k8se2e.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "k8se2e", "plugins": [
  {"type": "bridge", "bridge": "$PODS_BR", "isGateway": false, "ipMasq": false, "hairpinMode": false,
   "ipam": {"type": "host-local",
            "ranges": [[{"subnet": "198.19.0.0/16", "rangeStart": "198.19.$((64 * i + 1)).1",
                         "rangeEnd": "198.19.$((64 * i + 63)).254"}]],
            "dataDir": "$n/cni/ipam"}},
  {"type": "loopback"}]}
EOF
  cat > "$n/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$n/containerd/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupsPerQOS: true
cgroupRoot: /$CG$i
address: 198.18.0.$((i + 1))
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((10348 + i))
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
podLogsDir: $n/pod-logs
volumePluginDir: $n/volume-plugins
makeIPTablesUtilChains: false
protectKernelDefaults: false
failSwapOn: false
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
clusterDNS: ["$DNS"]
clusterDomain: cluster.local
EOF
  start "containerd-$i" containerd --config "$n/containerd/config.toml"
done
for i in $(seq 0 $((NODES - 1))); do
  for _ in $(seq 60); do ctr_n "$i" version >/dev/null 2>&1 && break; sleep 0.5; done
  ctr_n "$i" version >/dev/null 2>&1 || fail "containerd $i does not answer"
  # The Job's herd:e2e is docker.io/library/herd:e2e to the kubelet and containerd.
  ctr_n "$i" images import --base-name docker.io/library/herd "$img/e2e.oci.tar" >/dev/null
  ctr_n "$i" images import --base-name docker.io/library/herd "$img/e2e-bad.oci.tar" >/dev/null
  ctr_n "$i" images import --base-name localhost/herd "$img/pause.oci.tar" >/dev/null
done
ctr_n 0 images ls -q
for i in $(seq 0 $((NODES - 1))); do
  n=$run/n$i
  start "kubelet-$i" "$bin/kubelet" --config="$n/kubelet.yaml" --kubeconfig="$KUBECONFIG" \
    --hostname-override="herd-e2e-c$i" --node-ip="198.18.0.$((i + 1))" --node-labels=herd.dev/role=client \
    --root-dir="$n/kubelet" --cert-dir="$n/kubelet/pki" -v=2
done
for _ in $(seq 120); do
  [ "$(kubectl get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" = "$NODES" ] && break; sleep 1
done
kubectl get nodes -o wide
[ "$(kubectl get nodes --no-headers | grep -c ' Ready ')" = "$NODES" ] || fail "not every node is Ready after 120 s"

# Where a run's pods are while they exist (herd deletes them at its end): each pod's node, IP
# and phase, over and over; and `kubectl get pods -o wide` once all three are placed.
watch_pods() { # NAME FILE (kubectl's complaints into logs/watch.log, which fail() shows)
  local i now
  for i in $(seq 600); do
    now=$(kubectl get pods -l "herd.dev/run=$1" -o \
      jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.podIP} {.status.phase}{"\n"}{end}' \
      2>>"$run/logs/watch.log" || true)
    [ -z "$now" ] || echo "$now" >> "$2"
    # The agents' processes, as the host sees them: their user.
    ps -eo uid=,args= | awk '$2 == "/herd" && $3 == "agent" {print $1}' >> "$2.uids"
    if [ ! -e "$2.wide" ] && [ "$(awk 'NF == 4 && $4 == "Running"' <<<"$now" | wc -l)" = 3 ]; then
      kubectl get pods -l "herd.dev/run=$1" -o wide > "$2.wide" 2>/dev/null || true
    fi
    sleep 0.5
    : "$i"
  done
}
served() {
  ip netns exec "$SRV_NS" curl -fsS "http://$SERVER:8080/herd/stats" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["routes"].get("/bytes", 0))'
}

step "1. a good run: three agents, the Job completes, the count is the server's"
before_count=$(served)
watch_pods herd-e2e-ok "$run/ok.pods" &
pid_of[watch-ok]=$!
set +e
"$HERD" cluster run --agents 3 --image herd:e2e --name herd-e2e-ok \
  -- "http://$SERVER:8080/bytes/64" -n 3000 -c 6 -t 1 --json "$run/ok.json" > "$run/ok.out" 2> "$run/ok.err"
code=$?
set -e
stop watch-ok
cat "$run/ok.out" "$run/ok.err"
[ "$code" = 0 ] || fail "the good run exited $code"
python3 - "$run/ok.json" <<'EOF' || fail "the good run's result"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["requests"]["completed"] == 3000, r["requests"]
assert len(r["agents"]) == 3, r["agents"]
assert all(a["steps"][0]["requests"]["completed"] == 1000 for a in r["agents"])
print("merged 3000 requests from 3 agents, 1000 each")
EOF
after_count=$(served)
[ "$((after_count - before_count))" = 3000 ] ||
  fail "herd serve answered $((after_count - before_count)) requests of /bytes, not 3000"
echo "herd serve answered exactly 3000: the merged count"
echo "(herd read it from agent 0's log: kubectl logs, through agent 0's kubelet)"
# Each pod's node and address, as the watcher last saw them.
awk 'NF >= 2 {node[$1] = $2} NF == 4 {ip[$1] = $3} END {for (p in node) print p, node[p], ip[p]}' \
  "$run/ok.pods" | sort > "$run/ok.placed"
cat "$run/ok.pods.wide" 2>/dev/null
if [ "$(wc -l < "$run/ok.placed")" != 3 ] || [ "$(awk '{print $2}' "$run/ok.placed" | sort -u | wc -l)" != 3 ]; then
  cat "$run/ok.placed"
  fail "the agents did not run on three distinct nodes"
fi
uids=$(sort -u "$run/ok.pods.uids" | tr '\n' ' ')
[ "$uids" = "65534 " ] || fail "the agents ran as user(s) ${uids:-none seen}, not 65534 (nobody, the image's USER)"
echo "the agents' processes ran as uid 65534 (nobody, the image's USER)"
echo "three agents on three nodes: $(awk '{printf "%s%s on %s", sep, $1, $2; sep = ", "}' "$run/ok.placed")"
# Agents 1 and 2 found agent 0 by its name: CoreDNS answered each of their pods' lookups.
name0='herd-e2e-ok-0\.herd-e2e-ok\.default\.svc\.cluster\.local\.'
while read -r pod node ip; do
  case $pod in herd-e2e-ok-0-*) continue ;; esac
  line=$(grep -F "] $ip:" "$run/logs/coredns.log" | grep -E "\"A IN $name0 .*NOERROR" | head -1)
  [ -n "$line" ] || fail "CoreDNS answered no lookup of agent 0's name from $pod ($ip, on $node)"
  echo "  coredns, for $pod: $line"
done < "$run/ok.placed"

step "2. agent 1 exits 3: the pod failure policy fails the Job, herd names the agent"
set +e
"$HERD" cluster run --agents 3 --image herd:e2e-bad --name herd-e2e-bad \
  -- "http://$SERVER:8080/bytes/64" -n 3000 -c 6 -t 1 > "$run/bad.out" 2> "$run/bad.err"
code=$?
set -e
cat "$run/bad.err"
[ "$code" = 1 ] || fail "the failing run exited $code"
grep -q 'agents 1)' "$run/bad.err" || fail "the failed agent is not named"
grep -q 'exit code 3 matching FailJob rule' "$run/bad.err" || fail "the exit code is not said"
# herd read agent 1's last words through its kubelet (kubectl logs) before deleting its pod.
grep -q 'agent 1 said: k8s-e2e: agent 1 of 3 exits 3, on purpose' "$run/bad.err" ||
  fail "agent 1's own words are not in herd's message"

step "3. nothing of herd's left"
for _ in $(seq 90); do
  [ -z "$(kubectl get jobs,services,pods -l herd.dev/run --no-headers 2>/dev/null)" ] && break
  sleep 1
done
# Asked once more, its errors not hidden: an API server that cannot answer is no pass.
left=$(kubectl get jobs,services,pods -l herd.dev/run -o name) ||
  fail "cannot ask the API server what is left"
[ -z "$left" ] || { kubectl get jobs,services,pods -l herd.dev/run; fail "objects left"; }
echo "no Job, Service or pod with the label herd.dev/run"
echo "all checks passed"
