#!/usr/bin/env bash
# multi.sh runs two nodes on this machine (docs/CONTRACT.md, Nodes): one etcd (the real server, built
# from the module), a manager on this host's Docker engine (node a, zone=a) and a manager on a
# second dockerd in a network namespace of its own, with a bridge of its own (node b, zone=b), so
# that host ports of the two engines do not collide, as on two hosts.
#
#   scripts/multi/multi.sh up     build, start it all, print how to use it
#   scripts/multi/multi.sh down   stop the managers, remove their containers, stop it all and
#                                 remove .multi/, saying each step; safe to run twice, and after
#                                 a failed up
#
# Pids, logs, etcd's data and the second engine live in .multi/ at the repo root. Needs root,
# dockerd, ip, curl and jq. MULTI_TIMEOUT (default 60) bounds each wait of up, in seconds;
# MULTI_STOP_GRACE (default 3) is how long down lets a process stop before it kills it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
readonly root state=$root/.multi
readonly engine=$state/engine-b netns=rmmulti bridge=rmmulti0 port_a=10262 port_b=10263
readonly host_b=unix://$engine/docker.sock
timeout=${MULTI_TIMEOUT:-60}
# stop_grace is how long down lets a process stop on SIGTERM before it kills it.
stop_grace=${MULTI_STOP_GRACE:-3}

usage() { sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; }
log() { printf 'multi: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# step says what comes next, with the seconds gone by.
step() { log "[${SECONDS}s] $*"; }
# poll WHAT COMMAND... runs COMMAND until it succeeds, for at most $timeout seconds.
poll() {
	local what=$1 deadline=$((SECONDS + timeout))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || { log "timed out after ${timeout}s waiting for $what"; return 1; }
		sleep 0.2
	done
}
listening() { (: </dev/tcp/127.0.0.1/"$1") 2>/dev/null; }
# free_port prints a loopback port below the ephemeral range that nothing listens on.
free_port() { local p; while p=$((20000 + RANDOM % 12000)); listening "$p"; do :; done; echo "$p"; }
# start NAME COMMAND... runs COMMAND in the background, its pid and log in .multi/NAME.{pid,log}.
start() { nohup "${@:2}" >"$state/$1.log" 2>&1 & echo $! >"$state/$1.pid"; }
# alive NAME: the process of .multi/NAME.pid runs, and is ours (its command line names the repo).
alive() {
	local pid
	pid=$(cat "$state/$1.pid" 2>/dev/null) && grep -qF "$root" "/proc/$pid/cmdline" 2>/dev/null
}
gone() { ! alive "$1"; }
answers_or_gone() { "${@:2}" || gone "$1"; }
# started NAME COMMAND... waits until COMMAND succeeds; fails, showing NAME's log, if NAME exits first.
started() {
	if poll "$1" answers_or_gone "$@" && alive "$1"; then return; fi
	log "$1 did not start; the end of .multi/$1.log:"
	tail -n 20 "$state/$1.log" >&2
	exit 1
}
# stop SECONDS NAME...: SIGTERM to each, then SIGKILL to those that have not stopped within
# SECONDS; the processes stop side by side.
stop() {
	local wait=$1 name pid deadline
	shift
	for name; do
		alive "$name" && pid=$(cat "$state/$name.pid") && kill -TERM "$pid" 2>/dev/null || true
	done
	deadline=$((SECONDS + wait))
	for name; do
		alive "$name" || continue
		pid=$(cat "$state/$name.pid")
		while alive "$name" && ((SECONDS < deadline)); do sleep 0.1; done
		if alive "$name"; then
			log "  $name did not stop within ${wait}s: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			while alive "$name"; do sleep 0.1; done
		fi
	done
}
# leads PORT: the manager serving metrics on PORT leads.
leads() {
	local metrics
	metrics=$(curl -fsS --max-time 2 "http://127.0.0.1:$1/metrics") && grep -qx 'replication_manager_is_leader 1' <<<"$metrics"
}
etcd_url() { echo "http://127.0.0.1:$(cat "$state/etcd.port")"; }
# registry_id prints the id in /registry/meta/registry-id, read through etcd's JSON gateway.
registry_id() {
	curl -fsS --max-time 3 "$(etcd_url)/v3/kv/range" -d "{\"key\":\"$(printf %s /registry/meta/registry-id | base64 -w0)\"}" |
		jq -er '.kvs[0].value' | base64 -d
}

up() {
	[[ ! -e $state ]] || die "$state exists: run scripts/multi/multi.sh down first"
	(($(id -u) == 0)) || die "a second dockerd needs root"
	((${#host_b} < 100)) || die "$host_b is too long a path for a unix socket"
	! ip netns pids "$netns" >/dev/null 2>&1 || die "network namespace $netns exists: run scripts/multi/multi.sh down first"
	for p in $port_a $port_b; do ! listening "$p" || die "port $p is taken"; done
	trap '(($? == 0)) || log "up failed: see the logs in .multi/, then run scripts/multi/multi.sh down"' EXIT
	cd "$root"
	make build image
	go build -o bin/etcd go.etcd.io/etcd/server/v3
	mkdir -p "$engine/data"

	local cport pport etcd n=200
	cport=$(free_port)
	until pport=$(free_port) && ((pport != cport)); do :; done
	etcd=http://127.0.0.1:$cport
	echo "$cport" >"$state/etcd.port"
	start etcd "$root/bin/etcd" --name multi --data-dir "$state/etcd" \
		--listen-client-urls "$etcd" --advertise-client-urls "$etcd" --listen-peer-urls "http://127.0.0.1:$pport" \
		--initial-advertise-peer-urls "http://127.0.0.1:$pport" --initial-cluster "multi=http://127.0.0.1:$pport"
	started etcd curl -fsS --max-time 2 "$etcd/health"

	# the second engine on a bridge of its own, in a namespace of its own: never --bridge none,
	# which deletes docker0
	while ip -4 route | grep -q "^10\.213\.$n\."; do ((++n < 255)) || die "no free 10.213.x.0/24"; done
	ip netns add "$netns"
	ip -n "$netns" link set lo up
	ip -n "$netns" link add "$bridge" type bridge
	ip -n "$netns" addr add "10.213.$n.1/24" dev "$bridge"
	ip -n "$netns" link set "$bridge" up
	# an engine ID other than the main engine's: engine-id for Docker 23+, a key of its own before
	cat /proc/sys/kernel/random/uuid >"$engine/data/engine-id"
	if (($(dockerd --version | sed -E 's/^[^0-9]*([0-9]+)\..*/\1/') < 23)); then
		printf '{"deprecated-key-path": "%s"}\n' "$engine/key.json"
	else echo '{}'; fi >"$engine/daemon.json"
	# nsenter changes the network namespace alone (ip netns exec would remount /sys, hiding cgroups)
	start dockerd nsenter --net="/var/run/netns/$netns" dockerd --host "$host_b" --data-root "$engine/data" --exec-root "$engine/exec" \
		--pidfile "$engine/docker.pid" --config-file "$engine/daemon.json" --bridge "$bridge" \
		--iptables=false --ip-masq=false --storage-driver "$(docker info -f '{{.Driver}}')"
	started dockerd docker -H "$host_b" version
	docker save demo-task:latest | docker -H "$host_b" load -q >/dev/null

	# a leads before b starts: the README kills b's manager, and the leader that sees b go is the
	# one that records it (docs/NODES.md, A gone node stays visible)
	start manager-a "$root/bin/replication-manager" --etcd-servers "$etcd" \
		--node-name a --node-labels zone=a --metrics-bind-address "127.0.0.1:$port_a"
	started manager-a leads "$port_a"
	start manager-b "$root/bin/replication-manager" --etcd-servers "$etcd" --docker-host "$host_b" \
		--node-name b --node-labels zone=b --metrics-bind-address "127.0.0.1:$port_b"
	started manager-b curl -fsS --max-time 2 "http://127.0.0.1:$port_b/livez"
	cat <<EOF
multi: up in ${SECONDS}s: etcd at $etcd, node a on this host's Docker, node b on $host_b
  bin/rcctl --etcd-servers 127.0.0.1:$cport get     (apply -f FILE, get -o wide, describe ID, ...)
  bin/rcctl --etcd-servers 127.0.0.1:$cport nodes
  docker ps --filter label=replicationController      node a's containers
  docker -H $host_b ps
  http://127.0.0.1:$port_a/ and http://127.0.0.1:$port_b/: the managers' status pages
  logs and pids in .multi/; scripts/multi/multi.sh down (make multi-down) removes it all
EOF
}

# down stops the managers first, with a short grace, and then removes the containers by force:
# waiting for the managers to remove them would wait forever on a node whose manager was
# killed (the README's kill -9), and etcd goes with .multi/ anyway. Each step says what it does.
down() {
	local id='' pids pid on_a='' on_b=''
	if alive etcd; then id=$(registry_id 2>/dev/null) || id=''; fi
	step "stopping the managers (SIGTERM; SIGKILL after ${stop_grace}s)"
	stop "$stop_grace" manager-a manager-b
	# node b's engine goes away with every container on it; on this host's, only this registry's
	if alive dockerd; then on_b=$(docker -H "$host_b" ps -aq) || on_b=''; fi
	if [[ -n $id ]]; then on_a=$(docker ps -aq --filter "label=replicationController.registry=$id") || on_a=''; fi
	step "removing $(wc -w <<<"$on_b") containers on node b and $(wc -w <<<"$on_a") of registry ${id:-<unknown>} on node a"
	xargs -r -n 4 -P 4 docker -H "$host_b" rm -f <<<"$on_b" >/dev/null 2>&1 &
	xargs -r -n 4 -P 4 docker rm -f <<<"$on_a" >/dev/null 2>&1 &
	wait || true
	step "stopping etcd and the second dockerd"
	stop "$stop_grace" etcd dockerd
	# what a killed dockerd leaves: shims with their containers, and mounts (deepest first)
	pids=$(grep -lsF "$engine/exec/" /proc/[0-9]*/cmdline | cut -d/ -f3) || true
	for pid in $pids; do
		pkill -KILL -P "$pid" || true
		kill -KILL "$pid" 2>/dev/null || true
	done
	step "removing the network namespace, mounts and .multi/"
	awk -v d="$state/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r | xargs -r -n 1 umount -l
	if ip netns pids "$netns" >/dev/null 2>&1; then ip netns del "$netns"; fi
	rm -rf "$state"
	log "down in ${SECONDS}s: nothing of it is left"
}

case ${1:-} in
up | down) "$1" ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
