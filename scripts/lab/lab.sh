#!/usr/bin/env bash
# lab.sh runs the docker-compose lab of docs/LAB.md: etcd and replication-manager
# in containers built here FROM scratch, managing containers on this host's Docker.
#
#   scripts/lab/lab.sh up            one etcd, one manager; seeds the controller lab-web
#   scripts/lab/lab.sh ha            three etcd members, two managers with leader election
#   scripts/lab/lab.sh down          remove everything the lab created (not the images)
#   scripts/lab/lab.sh status        what runs, which manager leads, the controllers
#   scripts/lab/lab.sh smoke         the smoke test of make test-lab, in a lab of its own
#   scripts/lab/lab.sh rcctl ARGS... rcctl inside a manager container
#   scripts/lab/lab.sh images        build the images that are missing
#
# The images replication-manager:lab (with /rcctl), etcd:lab and demo-task:latest are built when
# missing, or always with LAB_REBUILD=1 (smoke: unless LAB_REBUILD=0). Settings: docs/LAB.md.
set -euo pipefail

readonly project=rmlab label=lab=rmlab
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly here root=${here%/scripts/lab}
readonly ours=(--filter "label=$label" --filter "label=com.docker.compose.project=$project")
# Docker 20.10 can list a container it failed to remove as "Removal In Progress" although
# it is gone; only a restart of dockerd clears such a ghost. The lab ignores that state.
readonly live=(--filter status=created --filter status=restarting --filter status=running
	--filter status=paused --filter status=exited --filter status=dead)
timeout=${LAB_TIMEOUT:-90}
controller=${LAB_CONTROLLER:-lab-web}
# the compose files default to the same socket, and hold the defaults of the ports
export LAB_DOCKER_SOCKET=${LAB_DOCKER_SOCKET:-/var/run/docker.sock}

usage() { sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; }
log() { printf 'lab: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
get() { if command -v curl >/dev/null; then curl -fsS --max-time 3 "$1"; else wget -q -T 3 -O - "$1"; fi; }

# wait_for WHAT COMMAND... polls COMMAND until it succeeds or LAB_TIMEOUT passes,
# and leaves in $waited how many seconds that took.
wait_for() {
	local what=$1 start deadline=$(($(date +%s) + timeout)) out
	start=$(now)
	shift
	until out=$("$@" 2>&1); do
		(($(date +%s) < deadline)) || { log "timed out after ${timeout}s waiting for $what${out:+: $out}"; return 1; }
		sleep 0.2
	done
	waited=$(since "$start")
}
# holds SECONDS COMMAND... checks that COMMAND succeeds at every look for SECONDS.
holds() {
	local end=$(($(date +%s) + $1))
	shift
	while (($(date +%s) < end)); do
		"$@" >/dev/null 2>&1 || { log "FAIL: '$*' stopped holding; the replicas:"; replicas >&2; return 1; }
		sleep 0.5
	done
}

# ---- the lab's containers -----------------------------------------------------------------

# compose MODE ARGS... runs compose v2 when it answers, else docker-compose 1.x, on MODE's file.
compose() {
	local bin=(docker-compose) file=$here/docker-compose.yml
	if docker compose version >/dev/null 2>&1; then bin=(docker compose); fi
	[[ $1 != ha ]] || file=$here/docker-compose.ha.yml
	"${bin[@]}" -p $project -f "$file" "${@:2}"
}
# running_mode prints single or ha for the lab that exists, or nothing.
running_mode() { docker ps -a "${ours[@]}" --format '{{.Label "lab.mode"}}' | sort -u | head -n 1; }
# managers prints the names of the running manager containers, in service order.
managers() {
	docker ps "${ours[@]}" --format '{{.Label "com.docker.compose.service"}} {{.Names}}' | sort | awk '/^manager/ { print $2 }'
}
url() { echo "http://$(docker port "$1" 10252/tcp | head -n 1)"; }
rcctl() {
	local m etcd=http://etcd:2379
	m=$(managers | head -n 1)
	[[ -n $m ]] || die "no lab manager is running (scripts/lab/lab.sh up)"
	[[ $(running_mode) != ha ]] || etcd=http://etcd1:2379,http://etcd2:2379,http://etcd3:2379
	docker exec -i "$m" /rcctl --etcd-servers "$etcd" "$@"
}
# is_leader M: the manager's replication_manager_is_leader is 1. (Not grep -q: a grep that
# stops reading early makes curl fail on the closed pipe, and pipefail fails the check.)
is_leader() { get "$(url "$1")/metrics" | grep -E '^replication_manager_is_leader(\{[^}]*\})? 1$' >/dev/null; }
# leader prints the one running manager that leads; it fails when none or several do.
leader() {
	local m found=()
	for m in $(managers); do if is_leader "$m"; then found+=("$m"); fi; done
	((${#found[@]} == 1)) && echo "${found[0]}"
}
leader_is() { [[ $(leader) == "$1" ]]; }
# ready N: N managers answer /readyz (etcd and Docker answer them; a standby is ready too).
ready() {
	local m n=0
	for m in $(managers); do if get "$(url "$m")/readyz"; then n=$((n + 1)); fi; done
	((n >= $1))
}
wait_ready() { wait_for "$1 ready manager(s)" ready "$1" || { compose "$(running_mode)" logs --no-color --tail 30 >&2; return 1; }; }
replicas() { docker ps -a --filter "label=$label" --filter "label=replicationController=$controller" --format '{{.ID}} {{.State}}'; }
running_is() { [[ $(replicas | grep -c ' running$') == "$1" ]]; }
# steady N: exactly N replicas run and none is on its way (created, restarting, paused).
# Exited ones may stay: the manager keeps a crashed container for inspection.
steady() { replicas | awk -v n="$1" '$2 == "running" { r++ } $2 ~ /^(created|restarting|paused)$/ { o++ } END { exit r != n || o }'; }

# ---- up, down, status ---------------------------------------------------------------------

# build IMAGE COMMAND... runs COMMAND IMAGE when the image is missing, or with LAB_REBUILD=1.
build() {
	if [[ ${LAB_REBUILD:-0} == 1 ]] || ! docker image inspect "$1" >/dev/null 2>&1; then
		log "building $1"
		"${@:2}" "$1" >/dev/null
	fi
}
images() {
	build replication-manager:lab "$root/scripts/build-image.sh" --cmd replication-manager \
		--bin-name replication-manager --add rcctl
	build etcd:lab "$here/build-etcd-image.sh"
	build demo-task:latest "$root/scripts/build-image.sh"
}

# start MODE starts the single or the ha lab and seeds the controller.
start() {
	[[ -z $(running_mode) || $(running_mode) == "$1" ]] || die "the $(running_mode) lab runs; run scripts/lab/lab.sh down first"
	log "WARNING: the manager mounts the Docker socket, root on this host: run the lab on a machine you own"
	[[ -S $LAB_DOCKER_SOCKET ]] || die "no Docker socket at $LAB_DOCKER_SOCKET (set LAB_DOCKER_SOCKET)"
	# the manager runs as nobody, in the socket's group: no more than it needs
	LAB_MANAGER_USER=65534:$(stat -c %g "$LAB_DOCKER_SOCKET")
	export LAB_MANAGER_USER
	log "starting the $1 lab (project $project)"
	compose "$1" up -d
	if [[ $1 == ha ]]; then wait_ready 2; else wait_ready 1; fi
	wait_for "the seed of $controller" seed
	wait_for "2 running replicas of $controller" running_is 2 || log "see scripts/lab/lab.sh status"
}
# seed creates the controller unless it exists; etcd may still be electing its leader.
seed() {
	rcctl get "$controller" ||
		rcctl run "$controller" --image demo-task:latest --replicas 2 --label "name=$controller" --label $label
}

# down deletes the lab's controllers, so that the manager removes their containers,
# then the compose project, then whatever still carries the label.
down() {
	local ids=() id failed=0 ghosts
	for id in $(rcctl get 2>/dev/null | awk 'NR > 1 { print $1 }'); do # none without a manager
		if rcctl delete "$id" >/dev/null 2>&1; then log "deleted controller $id" && ids+=("$id"); fi
	done
	# (a prefix assignment holds for the function's run only)
	timeout=30 wait_for "the manager to remove the lab's replicas" gone ${ids[@]+"${ids[@]}"} || true
	# --remove-orphans takes the other lab's services too
	compose "$(running_mode)" down --volumes --remove-orphans --timeout 15 >/dev/null 2>&1 || true
	docker ps -aq --filter "label=$label" "${live[@]}" | xargs -r docker rm -f >/dev/null || failed=1
	docker network ls -q --filter "label=$label" | xargs -r docker network rm >/dev/null || failed=1
	docker volume ls -q --filter "label=$label" | xargs -r docker volume rm >/dev/null || failed=1
	ghosts=$(docker ps -aq --filter "label=$label" --filter status=removing | tr '\n' ' ')
	[[ -z $ghosts ]] || log "note: Docker lists lab containers that are gone as 'Removal In Progress' ($ghosts)"
	((!failed)) || { log "some of the lab could not be removed: see the errors above"; return 1; }
	log "the lab is down (images kept: replication-manager:lab, etcd:lab, demo-task:latest)"
}
# gone ID... succeeds when no container of those controllers is left.
gone() { local id; for id; do [[ -z $(docker ps -aq --filter "label=replicationController=$id" "${live[@]}") ]] || return 1; done; }

status() {
	local mode m
	mode=$(running_mode)
	[[ -n $mode ]] || { echo "no lab runs"; return; }
	compose "$mode" ps
	for m in $(managers); do
		echo "$m: $(url "$m")/metrics, leads: $(if is_leader "$m"; then echo yes; else echo no; fi)"
	done
	rcctl get || true
	echo "rcctl: scripts/lab/lab.sh rcctl ARGS, or bin/rcctl --etcd-servers 127.0.0.1:${LAB_ETCD_PORT:-23790} ARGS (docs/LAB.md)"
}

# ---- smoke (make test-lab) ----------------------------------------------------------------

# smoke_exit tears the lab down whatever happened, and says last how it went.
smoke_exit() {
	local rc=$1 m
	trap - EXIT
	((rc == 0)) || for m in $(managers); do
		log "the last lines of $m's log:" && docker logs --tail 15 "$m" 2>&1 | sed 's/^/    /' >&2
	done
	log "tearing down"
	down || rc=1
	if ((rc == 0)); then log "PASS: the smoke test of the ha lab"; else log "FAIL: the smoke test (exit code $rc)"; fi
	exit "$rc"
}

# smoke runs the HA lab with 4 replicas; kills the leader (the standby takes over within
# the lease) and a replica; starts the old leader again, which must stand by; stops the
# leader with SIGTERM (it resigns: a quick handover, exit code 0). Exactly 4 replicas run
# throughout. It prints the timings as it goes.
smoke() {
	local t lead standby stopper code waited
	[[ -z $(running_mode) ]] || die "a lab runs already; the smoke test needs its own: run scripts/lab/lab.sh down first"
	trap 'smoke_exit $?' EXIT
	trap 'exit 130' INT TERM
	# a controller of its own, so that nothing an earlier lab left counts
	controller=${LAB_CONTROLLER:-smoke-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')}
	LAB_REBUILD=${LAB_REBUILD:-1} images # the images are what is under test
	t=$(now)
	start ha
	log "the ha lab is up in $(since "$t")s"
	rcctl scale "$controller" --replicas 4 >/dev/null
	wait_for "4 running replicas of $controller" running_is 4
	log "scaled $controller to 4 in ${waited}s"
	holds 3 steady 4
	wait_for "one leading manager" leader
	lead=$(leader)
	standby=$(managers | grep -vx "$lead")
	log "$lead leads, $standby stands by"
	docker kill "$lead" >/dev/null
	wait_for "$standby to take over" leader_is "$standby"
	log "HANDOVER after docker kill of the leader: ${waited}s"
	holds 3 steady 4
	# kill, not rm: the manager renames a dead replica, and a rename during a removal makes a ghost
	docker kill "$(replicas | awk '$2 == "running" { id = $1 } END { print id }')" >/dev/null
	wait_for "$controller to be back at 4 running" running_is 4
	log "the new leader replaced a killed replica in ${waited}s"
	holds 2 steady 4
	docker start "$lead" >/dev/null
	wait_ready 2
	holds 2 leader_is "$standby" # the old leader is back as the standby
	docker stop --time 30 "$standby" >/dev/null &
	stopper=$!
	wait_for "$lead to take over after SIGTERM" leader_is "$lead"
	log "HANDOVER after SIGTERM to the leader (it resigns): ${waited}s"
	wait "$stopper"
	code=$(docker inspect -f '{{.State.ExitCode}}' "$standby")
	log "$standby exited with code $code"
	[[ $code == 0 ]] || die "FAIL: want exit code 0 after SIGTERM"
	holds 5 steady 4
}

cmd=${1:-}
(($# == 0)) || shift
case "$cmd" in
up) images; start single; status ;;
ha) images; start ha; status ;;
down | status | smoke | rcctl | images) "$cmd" "$@" ;;
-h | --help | help) usage ;;
*) usage >&2; exit 2 ;;
esac
