#!/usr/bin/env bash
# Four "machines" on this one, to try herd's [hosts] (docs/hosts.md) without three computers:
# network namespaces on one bridge, 198.18.99.0/24 (herd's own range), each but the first
# running its own sshd. Root only; nothing outside the namespaces and DIR is touched but
# /run/sshd (the empty directory sshd needs).
#
#   scripts/try-hosts.sh up DIR     # makes them; prints what to run
#   scripts/try-hosts.sh down DIR   # stops the sshds (by their PIDs) and removes them
#
# The hosts:  herdtry-me   198.18.99.1   where you run herd (the client machine)
#             herdtry-srv  198.18.99.2   sshd: the server host
#             herdtry-c1   198.18.99.3   sshd: a client host
#             herdtry-c2   198.18.99.4   sshd: a client host
#             herdtry-rtr  198.18.99.5   sshd: a router host (for the proxy paths)
# Each sshd host has its own HOME and TMPDIR under DIR (as a machine has its own), and lets in
# root with a key made here; DIR/lab.ssh_config holds that key and the hosts' keys.
# They share this machine's CPUs, memory and file system: they show what herd does on hosts,
# not what separate machines measure.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [[ -z "$cmd" || -z "$dir" ]]; then
    echo "usage: $0 up|down DIR" >&2
    exit 2
fi
if [[ $(id -u) != 0 ]]; then
    echo "$0: network namespaces need root: run it with sudo" >&2
    exit 1
fi
hosts=(me srv c1 c2 rtr)
served=(srv c1 c2 rtr)
addr() {
    case $1 in
    me) echo 198.18.99.1 ;; srv) echo 198.18.99.2 ;; c1) echo 198.18.99.3 ;;
    c2) echo 198.18.99.4 ;; rtr) echo 198.18.99.5 ;;
    esac
}

down() {
    if [[ -f "$dir/sshd.pids" ]]; then
        local pids
        pids=$(cat "$dir/sshd.pids")
        for pid in $pids; do kill "$pid" 2>/dev/null || true; done
        # Gone, or a zombie its new parent has yet to reap: it has let go of everything.
        for pid in $pids; do
            for _ in $(seq 50); do
                state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
                [[ -z "$state" || "$state" == Z ]] && break
                sleep 0.1
            done
        done
        rm -f "$dir/sshd.pids"
    fi
    for h in "${hosts[@]}" br; do
        ip netns del "herdtry-$h" 2>/dev/null || true
    done
}

case $cmd in
down)
    down
    echo "removed the namespaces herdtry-*; $dir is yours to delete"
    ;;
up)
    command -v sshd >/dev/null || [[ -x /usr/sbin/sshd ]] || {
        echo "$0: no sshd: apt-get install openssh-server" >&2
        exit 1
    }
    if ip netns list | grep -q '^herdtry-'; then
        echo "$0: herdtry-* namespaces exist already: $0 down DIR first" >&2
        exit 1
    fi
    mkdir -p "$dir" /run/sshd
    dir=$(cd "$dir" && pwd)
    trap 'down; echo "$0: failed; nothing left" >&2' ERR
    ip netns add herdtry-br
    ip -n herdtry-br link add br0 type bridge
    ip -n herdtry-br link set br0 up
    for h in "${hosts[@]}"; do
        ip netns add "herdtry-$h"
        ip link add "t-$h" netns "herdtry-$h" type veth peer name "p-$h" netns herdtry-br
        ip -n herdtry-br link set "p-$h" master br0 up
        ip -n "herdtry-$h" addr add "$(addr "$h")/24" dev "t-$h"
        ip -n "herdtry-$h" link set "t-$h" up
        ip -n "herdtry-$h" link set lo up
    done
    ssh-keygen -q -t ed25519 -N '' -C herdtry -f "$dir/user" <<<y >/dev/null
    : >"$dir/known_hosts"
    : >"$dir/sshd.pids"
    for h in "${served[@]}"; do
        hd="$dir/$h"
        mkdir -p "$hd/home" "$hd/tmp"
        ssh-keygen -q -t ed25519 -N '' -C "$h" -f "$hd/host" <<<y >/dev/null
        cp "$dir/user.pub" "$hd/authorized_keys"
        echo "$(addr "$h") $(cut -d' ' -f1,2 "$hd/host.pub")" >>"$dir/known_hosts"
        cat >"$hd/sshd_config" <<EOF
HostKey $hd/host
ListenAddress $(addr "$h")
AuthorizedKeysFile $hd/authorized_keys
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile none
PasswordAuthentication no
KbdInteractiveAuthentication no
SetEnv HOME=$hd/home TMPDIR=$hd/tmp
EOF
        ip netns exec "herdtry-$h" /usr/sbin/sshd -D -e -f "$hd/sshd_config" \
            </dev/null >/dev/null 2>"$hd/sshd.log" &
        echo $! >>"$dir/sshd.pids"
    done
    cat >"$dir/lab.ssh_config" <<EOF
Host *
  User root
  IdentityFile $dir/user
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  LogLevel ERROR
EOF
    # Ready when each sshd answers from the client machine (a new bridge drops the first
    # packets for about a second).
    for h in "${served[@]}"; do
        for _ in $(seq 100); do
            if ip netns exec herdtry-me bash -c "exec 3<>/dev/tcp/$(addr "$h")/22" 2>/dev/null; then
                break
            fi
            sleep 0.1
        done
    done
    trap - ERR
    cat <<EOF
four hosts up. In your experiment file:

  [hosts]
  server = "ssh://198.18.99.2"
  clients = ["ssh://198.18.99.3", "ssh://198.18.99.4"]
  ssh_config = "$dir/lab.ssh_config"
  # router = "ssh://198.18.99.5"   # with a proxy path in [matrix] path (docs/hosts.md)

and run herd on the client machine:

  ip netns exec herdtry-me herd lab hosts install FILE
  ip netns exec herdtry-me herd lab run FILE

$0 down $dir removes them.
EOF
    ;;
*)
    echo "usage: $0 up|down DIR" >&2
    exit 2
    ;;
esac
