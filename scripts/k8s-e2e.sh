#!/usr/bin/env bash
# The opt-in end-to-end check of `herd cluster run --agents N` against a real Kubernetes
# control plane (never in CI: its first run builds ~530 MB of binaries, ~14 min on one core).
#
#   HERD_K8S_E2E=1 scripts/k8s-e2e.sh            # as root (network namespaces)
#
# What runs: etcd, kube-apiserver, kube-controller-manager (the real Job controller),
# kube-scheduler (the real scheduler) built from the Go modules the proxy serves (the recipe of
# shared/docs/scale-out.md §3.2), and kwok for three client nodes and no kubelet. Each node is
# a network namespace (herd-e2e-c0..c2, on a bridge with herd serve in herd-e2e-srv), and
# scripts/k8s-e2e/kubelet.py plays the kubelet (kubectl-logs.sh serves its pods' logs): it runs each scheduled pod's command in its
# node's namespace (the real `herd agent`, the image's /herd being this build's binary),
# resolves what the pod would get (the index label, agent 0's name) and writes the real exit
# code back to the pod's status. Then, with the user-facing command and the real kubectl:
#   1. a good run: the Job completes, three agents on three distinct nodes (anti-affinity),
#      herd prints the merged result, whose count is herd serve's own;
#   2. agent 1 exits 3: the pod failure policy fails the Job, herd says which agent, exit 1;
#   3. nothing left: no Job, Service or pod of herd's, no namespace, no process.
# What it cannot show: a real kubelet's image pulls, cgroups and cpusets, host networking and
# log rotation (docs/cluster.md says so).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${HERD_K8S_E2E:-}" = 1 ] || { echo "opt-in: HERD_K8S_E2E=1 $0 (builds a control plane: ~14 min the first time)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "error: needs root (network namespaces for the nodes)" >&2; exit 1; }
for tool in go kubectl openssl python3 ip curl; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing" >&2; exit 1; }
done

K8S=v1.34.4; STAGING=v0.34.4; ETCD=v3.6.16; KWOK=v0.8.0
cache=${HERD_K8S_CACHE:-$HOME/.cache/herd-k8s-e2e}
bin=$cache/bin
mkdir -p "$bin"
step() { printf '\n==> %s\n' "$*"; }

build_k8s() {
  [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kube-controller-manager" ] && [ -x "$bin/kube-scheduler" ] && return
  step "building kube-apiserver, kube-controller-manager, kube-scheduler $K8S (~8 min)"
  local d=$cache/k8sbuild
  mkdir -p "$d" && cd "$d"
  printf 'module example.invalid/k8sbuild\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n' "$K8S" > go.mod
  go mod download "k8s.io/kubernetes@$K8S"
  # k8s.io/kubernetes replaces its staging modules with ./staging paths; point those at the
  # published staging versions instead.
  sed -n '/^replace/,/^)/p' "$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S/go.mod" \
    | sed -E "s#=> \./staging/src/(k8s.io/[a-z0-9-]+)#=> \1 $STAGING#" >> go.mod
  printf '//go:build tools\npackage tools\nimport (\n _ "k8s.io/kubernetes/cmd/kube-apiserver"\n _ "k8s.io/kubernetes/cmd/kube-controller-manager"\n _ "k8s.io/kubernetes/cmd/kube-scheduler"\n)\n' > tools.go
  go mod tidy
  local minor=${K8S#v1.}; minor=${minor%%.*}
  local ld="-X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
    go build -ldflags "$ld" -o "$bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
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

build_kwok() {
  [ -x "$bin/kwok" ] && return
  step "building kwok $KWOK (~5 min)"
  GOBIN=$bin go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK"
}

build_k8s; build_etcd; build_kwok
step "building herd"
cargo build --release --locked -p herd --quiet
HERD=$PWD/target/release/herd

run=$(mktemp -d /tmp/herd-k8s-e2e.XXXXXX)
pids=()
nets=(herd-e2e-c0 herd-e2e-c1 herd-e2e-c2 herd-e2e-srv)
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  for n in "${nets[@]}"; do ip netns delete "$n" 2>/dev/null; done
  rm -rf "$run"
}
trap cleanup EXIT
start() { "$@" > "$run/$(basename "$1").log" 2>&1 & pids+=($!); }

step "the nodes' network: three node namespaces on a bridge, herd serve beside them"
ip netns add herd-e2e-srv
ip -n herd-e2e-srv link set lo up
ip -n herd-e2e-srv link add br0 type bridge
ip -n herd-e2e-srv addr add 198.18.3.100/24 dev br0
ip -n herd-e2e-srv link set br0 up
for i in 0 1 2; do
  ip netns add "herd-e2e-c$i"
  ip -n "herd-e2e-c$i" link set lo up
  ip link add eth0 netns "herd-e2e-c$i" type veth peer name "v$i" netns herd-e2e-srv
  ip -n "herd-e2e-c$i" addr add "198.18.3.1$i/24" dev eth0
  ip -n "herd-e2e-c$i" link set eth0 up
  ip -n herd-e2e-srv link set "v$i" master br0
  ip -n herd-e2e-srv link set "v$i" up
done
ip netns exec herd-e2e-srv "$HERD" serve --listen 198.18.3.100:8080 > "$run/serve.log" 2>&1 &
pids+=($!)

step "the control plane"
pki=$run/pki; mkdir -p "$pki"
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
echo 'herd-admin-token,herd-admin,1000,system:masters' > "$pki/tokens.csv"
cat > "$run/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "https://127.0.0.1:16443", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: herd-admin-token}}]
contexts: [{name: e2e, context: {cluster: e2e, user: admin, namespace: default}}]
current-context: e2e
EOF
export KUBECONFIG=$run/kubeconfig
start "$bin/etcd" --data-dir "$run/etcd" --listen-client-urls http://127.0.0.1:23790 \
  --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
  --initial-advertise-peer-urls http://127.0.0.1:23800 --initial-cluster default=http://127.0.0.1:23800
start "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:23790 --bind-address=127.0.0.1 \
  --advertise-address=127.0.0.1 --secure-port=16443 --cert-dir="$pki" --token-auth-file="$pki/tokens.csv" \
  --authorization-mode=RBAC --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range=10.96.0.0/24 --disable-admission-plugins=ServiceAccount \
  --endpoint-reconciler-type=none
for _ in $(seq 120); do kubectl get --raw /readyz >/dev/null 2>&1 && break; sleep 1; done
kubectl get --raw /readyz >/dev/null
start "$bin/kube-controller-manager" --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
  --authorization-kubeconfig="$KUBECONFIG" --bind-address=127.0.0.1 --leader-elect=false \
  --service-account-private-key-file="$pki/sa.key" \
  --controllers='*,-nodeipam,-serviceaccount-token,-bootstrapsigner,-tokencleaner'
start "$bin/kube-scheduler" --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
  --authorization-kubeconfig="$KUBECONFIG" --bind-address=127.0.0.1 --leader-elect=false
# kwok's fast stages, less pod-complete (it would mark every Job pod Succeeded whatever its
# process did): the kubelet stand-in writes the real ending.
kwok_src=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK/kustomize/stage
{
  for stage in node-initialize node-heartbeat-with-lease pod-ready pod-delete; do
    f=$(find "$kwok_src" -name "$stage.yaml" | sort | head -1)
    [ -n "$f" ] || { echo "error: kwok $KWOK has no stage $stage under $kwok_src" >&2; exit 1; }
    echo '---'; cat "$f"
  done
} > "$run/kwok-stages.yaml"
start "$bin/kwok" --kubeconfig="$KUBECONFIG" --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --config="$run/kwok-stages.yaml" --server-address=127.0.0.1:10247
for i in 0 1 2; do
  kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: herd-e2e-c$i
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {herd.dev/role: client, kubernetes.io/hostname: herd-e2e-c$i, type: kwok}
spec: {}
EOF
done
for _ in $(seq 60); do
  [ "$(kubectl get nodes --no-headers 2>/dev/null | grep -c ' Ready')" = 3 ] && break; sleep 1
done
kubectl get nodes

step "the kubelet stand-in"
mkdir -p "$run/pods"
export HERD_E2E_LOGDIR=$run/pods
HERD_BIN=$HERD python3 scripts/k8s-e2e/kubelet.py > "$run/kubelet.log" 2>&1 &
pids+=($!)

# herd drives kubectl as a user's would; only `kubectl logs` is answered from the stand-in's
# files (no kubelet serves pod logs here).
export HERD_KUBECTL=$PWD/scripts/k8s-e2e/kubectl-logs.sh
fail() { echo "FAILED: $*" >&2; for f in "$run"/*.log "$run"/pods/*.log; do echo "--- $f"; tail -20 "$f"; done >&2; exit 1; }

step "1. a good run: three agents, the Job completes, the count is the server's"
served() {
  ip netns exec herd-e2e-srv curl -fsS http://198.18.3.100:8080/herd/stats \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["routes"]["/bytes"])'
}
before=$(served)
set +e
"$HERD" cluster run --agents 3 --image herd:e2e --name herd-e2e-ok \
  -- http://198.18.3.100:8080/bytes/64 -n 3000 -c 6 -t 1 --json "$run/ok.json" > "$run/ok.out" 2> "$run/ok.err"
code=$?
set -e
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
after=$(served)
[ "$((after - before))" = 3000 ] || fail "herd serve answered $((after - before)) requests of /bytes, not 3000"
echo "herd serve answered exactly 3000: the merged count"
grep -q 'placed herd-e2e-ok-.* on herd-e2e-c0' "$run/kubelet.log" && grep -q 'on herd-e2e-c1' "$run/kubelet.log" \
  && grep -q 'on herd-e2e-c2' "$run/kubelet.log" || fail "the agents did not land on three distinct nodes"

step "2. agent 1 exits 3: the pod failure policy fails the Job, herd names the agent"
set +e
# The kubelet stand-in makes agent 1 of a Job named *-bad exit 3 instead of running herd.
"$HERD" cluster run --agents 3 --image herd:e2e --name herd-e2e-bad \
  -- http://198.18.3.100:8080/bytes/64 -n 3000 -c 6 -t 1 > "$run/bad.out" 2> "$run/bad.err"
code=$?
set -e
cat "$run/bad.err"
[ "$code" = 1 ] || fail "the failing run exited $code"
grep -q 'agents 1' "$run/bad.err" || fail "the failed agent is not named"
grep -q 'exit code 3' "$run/bad.err" || fail "the exit code is not said"

step "3. nothing left"
sleep 2
left=$(kubectl get jobs,services,pods -l herd.dev/run --no-headers 2>/dev/null | grep -c . || true)
[ "$left" = 0 ] || { kubectl get jobs,services,pods -l herd.dev/run; fail "objects left"; }
echo "all checks passed"
