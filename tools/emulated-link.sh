#!/usr/bin/env bash
# Two emulated hosts on this machine: network namespaces joined by a veth pair whose two ends
# are each shaped to RATE by `tc qdisc tbf` (one qdisc per direction), so traffic between the
# hosts crosses a real TCP/IP stack at a real rate. Rate only: netem (delay, loss) is absent
# on the machines this was built on, and the veth adds tens of microseconds of latency.
#
#   tools/emulated-link.sh up RATE [NAME]   e.g. up 1gbit, up 100mbit (tc's rate units)
#   tools/emulated-link.sh down [NAME]      remove both hosts (safe to repeat)
#   tools/emulated-link.sh status [NAME]    addresses and qdiscs, or "down"
#   tools/emulated-link.sh exec a|b [NAME] -- CMD...   run CMD on host a or b
#
# NAME (default lsim) prefixes everything: namespaces NAME-a and NAME-b, interfaces of the
# same names, one in each. Host a is 10.213.0.1, host b 10.213.0.2 (a private /30 that exists
# only inside these namespaces). `exec` sets GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME to the
# host's interface: without it gloo resolves the hostname to 127.0.0.1 and fails ("Gloo
# connectFullMesh failed ... Connection refused"). Needs root, ip and tc.
#
# Burst: 64 KB (BURST= to change). A larger bucket lets the start of every message through
# unshaped (with 256 KB the first ~256 KB of a message passed at loopback speed). Queue: 50 ms
# of data (QUEUE_MS=).
set -euo pipefail

cmd=${1:-}
shift || true
burst=${BURST:-64kb}
queue_ms=${QUEUE_MS:-50}

die() { echo "emulated-link: $*" >&2; exit 2; }
need() { command -v "$1" >/dev/null 2>&1 || die "needs '$1' (iproute2); not found"; }

name_arg() {
  local name=${1:-lsim}
  [[ $name =~ ^[a-z][a-z0-9]{0,12}$ ]] || die "bad NAME '$name'; accepted: a lowercase letter then up to 12 letters/digits"
  echo "$name"
}

up() {
  local rate=${1:-}
  [[ $rate =~ ^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit|tbit)$ ]] || die "bad RATE '$rate'; accepted: a number with bit, kbit, mbit, gbit or tbit (e.g. 1gbit, 100mbit)"
  local name
  name=$(name_arg "${2:-}")
  [[ $(id -u) == 0 ]] || die "needs root (ip netns, tc)"
  need ip
  need tc
  if ip netns list | grep -qw "$name-a"; then die "$name is already up; run: $0 down $name"; fi
  trap 'down "$name" >/dev/null 2>&1' ERR   # never leave half a link behind
  ip netns add "$name-a"
  ip netns add "$name-b"
  ip link add "$name-a" netns "$name-a" type veth peer name "$name-b" netns "$name-b"
  ip -n "$name-a" addr add 10.213.0.1/30 dev "$name-a"
  ip -n "$name-b" addr add 10.213.0.2/30 dev "$name-b"
  for h in a b; do
    ip -n "$name-$h" link set lo up
    ip -n "$name-$h" link set "$name-$h" up
    tc -n "$name-$h" qdisc add dev "$name-$h" root tbf rate "$rate" burst "$burst" latency "${queue_ms}ms"
  done
  trap - ERR
  echo "up: $name-a 10.213.0.1 <-> $name-b 10.213.0.2, $rate each way (tbf burst $burst, queue ${queue_ms} ms)"
}

down() {
  local name
  name=$(name_arg "${1:-}")
  for h in a b; do
    ip netns del "$name-$h" 2>/dev/null || true   # deleting a namespace removes its veth end (and the pair)
  done
  echo "down: $name"
}

status() {
  local name
  name=$(name_arg "${1:-}")
  if ! ip netns list | grep -qw "$name-a"; then echo "down"; return; fi
  for h in a b; do
    echo "$name-$h: $(ip -n "$name-$h" -4 -o addr show dev "$name-$h" | awk '{print $4}')"
    tc -n "$name-$h" qdisc show dev "$name-$h"
  done
}

run_on() {
  local host=${1:-}
  shift || true
  [[ $host == a || $host == b ]] || die "bad host '$host'; accepted: a or b"
  local name=lsim
  if [[ ${1:-} != -- ]]; then name=$(name_arg "$1"); shift; fi
  [[ ${1:-} == -- ]] || die "usage: $0 exec a|b [NAME] -- CMD..."
  shift
  ip netns list | grep -qw "$name-$host" || die "$name is down; run: $0 up RATE $name"
  exec ip netns exec "$name-$host" env GLOO_SOCKET_IFNAME="$name-$host" NCCL_SOCKET_IFNAME="$name-$host" "$@"
}

case $cmd in
  up) up "$@" ;;
  down) down "$@" ;;
  status) status "$@" ;;
  exec) run_on "$@" ;;
  *) die "usage: $0 up RATE [NAME] | down [NAME] | status [NAME] | exec a|b [NAME] -- CMD..." ;;
esac
