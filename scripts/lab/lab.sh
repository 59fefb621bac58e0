#!/usr/bin/env bash
# lab.sh runs the docker-compose lab: etcd and replication-manager in
# containers built locally FROM scratch, managing containers on this host's
# Docker Engine.
#
#   scripts/lab/lab.sh up       one etcd, one manager; seeds the controller lab-web
#   scripts/lab/lab.sh ha       three etcd members, two managers with --leader-elect
#   scripts/lab/lab.sh down     remove everything the lab created (not the images)
#   scripts/lab/lab.sh status   what runs, which manager leads, the controllers
#   scripts/lab/lab.sh smoke    up (ha when the manager has --leader-elect), scale,
#                               kill the leading manager, check the count holds,
#                               print the handover time, tear down
#   scripts/lab/lab.sh rcctl ARGS...   rcctl inside a manager container
#   scripts/lab/lab.sh images   build the three images
#
# Images: replication-manager:lab (with /rcctl), etcd:lab (a real etcd built
# from go.etcd.io/etcd/server/v3) and demo-task:latest. They are built only
# when missing, or always with LAB_REBUILD=1, and `down` keeps them.
#
# Environment: LAB_REBUILD=1, LAB_ETCD_PORT (23790), LAB_METRICS_PORT (10262),
# LAB_METRICS_PORT2 (10263, the second HA manager), LAB_DOCKER_SOCKET
# (/var/run/docker.sock), LAB_LOG_LEVEL (info), LAB_LEASE_DURATION (the HA
# managers' leader lease, 15s), LAB_TIMEOUT (seconds each wait may take, 90),
# LAB_CONTROLLER (the example controller's ID: lab-web, smoke-<random> for
# smoke), LAB_SMOKE_MODE (single or ha; smoke picks ha when the manager has
# --leader-elect). Host ports are published on 127.0.0.1 only. smoke
# rebuilds the images unless LAB_REBUILD=0.
#
# The compose project is "rmlab". Everything the lab creates carries the
# label lab=rmlab: the compose containers, network and volumes, and the
# replicas of the example controller (the label is in its template).
set -euo pipefail

readonly project=rmlab
readonly label=lab=rmlab
controller=${LAB_CONTROLLER:-lab-web}
if [[ ${1:-} == smoke && -z ${LAB_CONTROLLER:-} ]]; then
	# a controller of its own per run, so that nothing left by an earlier
	# lab (a crashed container kept for inspection, a Docker ghost) counts
	controller=smoke-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
fi
readonly controller
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
readonly here root
timeout=${LAB_TIMEOUT:-90}

export LAB_ETCD_PORT=${LAB_ETCD_PORT:-23790}
export LAB_METRICS_PORT=${LAB_METRICS_PORT:-10262}
export LAB_METRICS_PORT2=${LAB_METRICS_PORT2:-10263}
export LAB_DOCKER_SOCKET=${LAB_DOCKER_SOCKET:-/var/run/docker.sock}

usage() {
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
	exit "${1:-0}"
}

log() { printf 'lab: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# ---- compose and Docker helpers ------------------------------------------

# compose runs compose v2 ("docker compose") when the plugin answers, else
# docker-compose 1.x; both read the same files.
compose_bin=()
compose() {
	if ((${#compose_bin[@]} == 0)); then
		if docker compose version >/dev/null 2>&1; then
			compose_bin=(docker compose)
		elif command -v docker-compose >/dev/null 2>&1; then
			compose_bin=(docker-compose)
		else
			die "neither 'docker compose' nor docker-compose is installed"
		fi
	fi
	"${compose_bin[@]}" -p "$project" "$@"
}

compose_file() {
	case "$1" in
	single) echo "$here/docker-compose.yml" ;;
	ha) echo "$here/docker-compose.ha.yml" ;;
	*) die "unknown lab mode $1" ;;
	esac
}

# running_mode prints single or ha for the lab that exists, or nothing.
running_mode() {
	docker ps -a --filter "label=$label" --filter "label=com.docker.compose.project=$project" \
		--format '{{.Label "lab.mode"}}' | sort -u | head -n 1
}

# managers prints the IDs of the lab's running manager containers, in
# service order (manager, or manager1 then manager2).
managers() {
	docker ps --filter "label=$label" --filter "label=com.docker.compose.project=$project" \
		--format '{{.Label "com.docker.compose.service"}} {{.ID}}' |
		awk '$1 ~ /^manager/' | sort | awk '{ print $2 }'
}

# service_of prints the compose service of a container.
service_of() {
	docker inspect -f '{{index .Config.Labels "com.docker.compose.service"}}' "$1"
}

# metrics_url prints http://127.0.0.1:PORT for a manager container.
metrics_url() {
	local hostport
	hostport=$(docker port "$1" 10252/tcp 2>/dev/null | head -n 1) || return 1
	[[ -n $hostport ]] || return 1
	echo "http://$hostport"
}

http_get() {
	if command -v curl >/dev/null 2>&1; then
		curl -fsS --max-time 3 "$1"
	else
		wget -q -T 3 -O - "$1"
	fi
}

# Docker 20.10 can leave a container it failed to remove listed as
# "Removal In Progress" (status removing) although it is gone: such a ghost
# cannot be removed or inspected, only a restart of dockerd clears it. The
# lab counts and removes every other state.
readonly live_states=(--filter status=created --filter status=restarting --filter status=running
	--filter status=paused --filter status=exited --filter status=dead)

# replicas prints how many containers of the example controller exist (all
# states but removing), or with an argument in one state, e.g. running.
replicas() {
	local filters=(--filter "label=$label" --filter "label=replicationController=$controller")
	if (($# > 0)); then
		filters+=(--filter "status=$1")
	else
		filters+=("${live_states[@]}")
	fi
	docker ps -aq "${filters[@]}" | wc -l | tr -d ' '
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# wait_for DESCRIPTION COMMAND... polls COMMAND every 0.2s until it
# succeeds or the lab timeout passes.
wait_for() {
	local what=$1 deadline
	shift
	deadline=$(($(date +%s) + timeout))
	until "$@" >/dev/null 2>&1; do
		if (($(date +%s) >= deadline)); then
			log "timed out after ${timeout}s waiting for $what"
			return 1
		fi
		sleep 0.2
	done
}

# ---- images --------------------------------------------------------------

image_missing() {
	[[ ${LAB_REBUILD:-0} == 1 ]] || ! docker image inspect "$1" >/dev/null 2>&1
}

build_images() {
	if [[ ${LAB_REBUILD:-0} != 1 ]]; then
		log "images are built only when missing; LAB_REBUILD=1 rebuilds them from this tree"
	fi
	if image_missing replication-manager:lab; then
		log "building replication-manager:lab (with /rcctl)"
		"$root/scripts/build-image.sh" --cmd replication-manager --bin-name replication-manager \
			--add rcctl replication-manager:lab >/dev/null
	fi
	if image_missing etcd:lab; then
		log "building etcd:lab from go.etcd.io/etcd/server/v3"
		"$here/build-etcd-image.sh" etcd:lab >/dev/null
	fi
	if image_missing demo-task:latest; then
		log "building demo-task:latest"
		"$root/scripts/build-image.sh" demo-task:latest >/dev/null
	fi
}

# has_leader_elect reports whether the manager image knows --leader-elect.
has_leader_elect() {
	local out
	out=$(docker run --rm --network none --label "$label" replication-manager:lab \
		/replication-manager --help 2>&1) || true
	grep -q -- '--leader-elect' <<<"$out"
}

# ---- rcctl ---------------------------------------------------------------

etcd_endpoints() {
	case "$(running_mode)" in
	ha) echo "http://etcd1:2379,http://etcd2:2379,http://etcd3:2379" ;;
	*) echo "http://etcd:2379" ;;
	esac
}

# rcctl runs rcctl in the first running manager container, against the
# lab's etcd (by its name on the compose network).
rcctl() {
	local m
	m=$(managers | head -n 1)
	[[ -n $m ]] || die "no lab manager is running (scripts/lab/lab.sh up)"
	docker exec -i "$m" /rcctl --etcd-servers "$(etcd_endpoints)" "$@"
}

# ---- up ------------------------------------------------------------------

warn_socket() {
	cat >&2 <<'EOF'
lab: WARNING: the manager container mounts the Docker socket. Access to that
lab: socket is root on this host: anyone who controls the manager or its etcd
lab: can start privileged containers. Run the lab only on a machine you own.
EOF
}

manager_live() { http_get "$(metrics_url "$1")/livez"; }
manager_ready() { http_get "$(metrics_url "$1")/readyz"; }

# any_ready succeeds when at least one manager answers /readyz (a standby
# may report not ready while it does not lead).
any_ready() {
	local m
	for m in $(managers); do
		if manager_ready "$m" >/dev/null 2>&1; then
			return 0
		fi
	done
	return 1
}

managers_at_least() { (($(managers | wc -l) >= $1)); }

wait_ready() {
	local m want=$1
	wait_for "$want manager(s) to run" managers_at_least "$want" ||
		{ compose -f "$(compose_file "$(running_mode)")" logs --tail 30 >&2; return 1; }
	for m in $(managers); do
		wait_for "$(service_of "$m") /livez" manager_live "$m" || { docker logs --tail 30 "$m" >&2; return 1; }
	done
	wait_for "a manager's /readyz" any_ready || { compose -f "$(compose_file "$(running_mode)")" logs --tail 30 >&2; return 1; }
}

seed() {
	if rcctl get "$controller" >/dev/null 2>&1; then
		log "controller $controller exists"
		return
	fi
	local out
	# etcd may still be electing its leader: retry the write a few times
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		if out=$(rcctl run "$controller" --image demo-task:latest --replicas 2 \
			--label "name=$controller" --label "$label" 2>&1); then
			log "seeded controller $controller (2 replicas of demo-task:latest)"
			return
		fi
		sleep 1
	done
	die "seeding $controller failed: $out"
}

running_is() { test "$(replicas running)" -eq "$1"; }

start() {
	local mode=$1 other file
	other=$(running_mode)
	if [[ -n $other && $other != "$mode" ]]; then
		die "the $other lab is running; run scripts/lab/lab.sh down first"
	fi
	warn_socket
	if [[ $mode == ha ]] && ! has_leader_elect; then
		die "this replication-manager has no --leader-elect flag yet: the HA lab needs it (scripts/lab/lab.sh up runs one manager)"
	fi
	[[ -S $LAB_DOCKER_SOCKET ]] || die "no Docker socket at $LAB_DOCKER_SOCKET (set LAB_DOCKER_SOCKET)"
	# The manager runs as nobody, in the socket's group: no more than it needs.
	LAB_MANAGER_USER="65534:$(stat -c %g "$LAB_DOCKER_SOCKET")"
	export LAB_MANAGER_USER
	file=$(compose_file "$mode")
	log "starting the $mode lab (project $project)"
	compose -f "$file" up -d
	local want=1
	[[ $mode == ha ]] && want=2
	wait_ready "$want"
	seed
	wait_for "2 running replicas of $controller" running_is 2 ||
		log "$controller is not at 2 running replicas yet: see scripts/lab/lab.sh status and the managers' logs"
}

print_usage() {
	local m
	m=$(managers | head -n 1)
	cat <<EOF

The lab runs. rcctl, inside the manager container:
  docker exec $(docker inspect -f '{{.Name}}' "$m" | sed 's|^/||') /rcctl --etcd-servers $(etcd_endpoints) get
  scripts/lab/lab.sh rcctl get                      (the same, shorter)
  scripts/lab/lab.sh rcctl scale $controller --replicas 4
  scripts/lab/lab.sh rcctl describe $controller
or from the host (make build first):
  bin/rcctl --etcd-servers 127.0.0.1:$LAB_ETCD_PORT get
Metrics and health: $(for m in $(managers); do printf 'curl %s/metrics  ' "$(metrics_url "$m")"; done)(/readyz, /livez)
The replicas:       docker ps --filter label=replicationController=$controller
Remove it all:      make lab-down   (scripts/lab/lab.sh down)
EOF
}

# ---- down ----------------------------------------------------------------

# down deletes the lab's controllers first, so that the manager removes the
# containers it made, then removes the compose project with its network and
# volumes, then whatever still carries the lab's label.
down() {
	local mode file ids=() left=()
	mode=$(running_mode)
	if [[ -n $(managers) ]]; then
		mapfile -t ids < <(rcctl get 2>/dev/null | awk 'NR > 1 { print $1 }')
		local id
		for id in ${ids[@]+"${ids[@]}"}; do
			if rcctl delete "$id" >/dev/null 2>&1; then
				log "deleted controller $id"
			fi
		done
		if ((${#ids[@]} > 0)); then
			local old=$timeout
			timeout=30
			wait_for "the manager to remove the lab's replicas" no_replicas "${ids[@]}" || true
			timeout=$old
		fi
	fi
	for file in "$here/docker-compose.ha.yml" "$here/docker-compose.yml"; do
		if [[ -z $mode || $file == "$(compose_file "$mode")" ]]; then
			compose -f "$file" down --volumes --remove-orphans --timeout 15 >/dev/null 2>&1 || true
		fi
	done
	# Leftovers: replicas the manager did not get to, and anything compose
	# did not know about.
	local failed=0
	mapfile -t left < <( (docker ps -aq --filter "label=$label" "${live_states[@]}"
		docker ps -aq --filter "label=com.docker.compose.project=$project" "${live_states[@]}") | sort -u)
	if ((${#left[@]} > 0)); then
		log "force-removing ${#left[@]} leftover container(s)"
		docker rm -f "${left[@]}" >/dev/null || failed=1
	fi
	mapfile -t left < <(docker network ls -q --filter "label=$label")
	if ((${#left[@]} > 0)); then
		docker network rm "${left[@]}" >/dev/null || failed=1
	fi
	mapfile -t left < <(docker volume ls -q --filter "label=$label")
	if ((${#left[@]} > 0)); then
		docker volume rm "${left[@]}" >/dev/null || failed=1
	fi
	mapfile -t left < <(docker ps -aq --filter "label=$label" --filter status=removing)
	if ((${#left[@]} > 0)); then
		log "note: Docker lists ${#left[@]} lab container(s) as 'Removal In Progress' that are already gone (${left[*]}): a Docker 20.10 ghost, cleared only by restarting dockerd"
	fi
	if ((failed)); then
		log "some of the lab could not be removed: see the errors above"
		return 1
	fi
	log "the lab is down (images kept: replication-manager:lab, etcd:lab, demo-task:latest)"
}

# no_replicas ID... succeeds when no container of those controllers is left.
no_replicas() {
	local id
	for id in "$@"; do
		[[ -z $(docker ps -aq --filter "label=replicationController=$id" "${live_states[@]}") ]] || return 1
	done
}

# ---- status and leadership -----------------------------------------------

# is_leader reports whether a manager leads: the replication_manager_is_leader
# metric when it exports one, else its log (the last line about gaining
# leadership comes after the last about losing it).
is_leader() {
	local m=$1 metrics
	if metrics=$(http_get "$(metrics_url "$m")/metrics" 2>/dev/null) &&
		grep -q '^replication_manager_is_leader' <<<"$metrics"; then
		grep -Eq '^replication_manager_is_leader(\{[^}]*\})? 1$' <<<"$metrics"
		return
	fi
	docker logs "$m" 2>&1 | awk '
		tolower($0) ~ /(lost|gave up|resign|stopped leading|no longer)/ && tolower($0) ~ /lead/ { gained = 0; next }
		tolower($0) ~ /(became|acquired|elected|is now|started leading)/ && tolower($0) ~ /lead/ { gained = 1 }
		END { exit !gained }'
}

# leader prints the one running manager that leads; it fails when none or
# more than one does.
leader() {
	local m found=()
	for m in $(managers); do
		if is_leader "$m"; then
			found+=("$m")
		fi
	done
	((${#found[@]} == 1)) || return 1
	echo "${found[0]}"
}

leader_is() { [[ $(leader) == "$1" ]]; }

leader_source() {
	local m metrics=
	m=$(managers | head -n 1)
	[[ -z $m ]] || metrics=$(http_get "$(metrics_url "$m")/metrics" 2>/dev/null) || true
	if grep -q '^replication_manager_is_leader' <<<"$metrics"; then
		echo "the replication_manager_is_leader metric"
	else
		echo "the managers' logs (no replication_manager_is_leader metric yet)"
	fi
}

status() {
	local mode m
	mode=$(running_mode)
	if [[ -z $mode ]]; then
		echo "no lab runs"
		return
	fi
	echo "lab: $mode (project $project)"
	compose -f "$(compose_file "$mode")" ps
	echo
	for m in $(managers); do
		local ready=no lead=no
		manager_ready "$m" >/dev/null 2>&1 && ready=yes
		is_leader "$m" && lead=yes
		[[ $mode == single ]] && lead="n/a"
		printf '%-10s ready=%-3s leader=%-3s %s\n' "$(service_of "$m")" "$ready" "$lead" "$(metrics_url "$m")"
	done
	echo
	rcctl get || true
	echo
	docker ps --filter "label=$label" --filter "label=replicationController" \
		--format 'table {{.Names}}\t{{.Status}}\t{{.Image}}'
}

# ---- smoke ---------------------------------------------------------------

# note logs a result of the smoke test and keeps it for the summary.
results=()
note() {
	results+=("$*")
	log "$*"
}

# smoke_exit tears the lab down whatever happened, then prints the results.
smoke_exit() {
	local rc=$1 m
	trap - EXIT
	if ((rc != 0)); then
		for m in $(managers); do
			log "last lines of $(service_of "$m")'s log:"
			docker logs --tail 15 "$m" 2>&1 | sed 's/^/    /' >&2
		done
	fi
	log "tearing down"
	down || rc=1
	if ((${#results[@]} > 0)); then
		printf '\nsmoke test summary:\n'
		printf '  %s\n' "${results[@]}"
	fi
	((rc == 0)) || printf 'smoke test FAILED (exit code %d)\n' "$rc"
	exit "$rc"
}

# holds_at N SECONDS checks at every look for SECONDS that exactly N
# replicas run and no other is on its way (created, restarting, paused).
# Exited and dead ones may stay: the manager keeps a crashed container for
# inspection, renamed out of its slot.
holds_at() {
	local n=$1 end=$(($(date +%s) + $2)) run other
	while (($(date +%s) < end)); do
		run=$(replicas running)
		other=$(($(replicas created) + $(replicas restarting) + $(replicas paused)))
		if ((run != n || other != 0)); then
			log "FAIL: want exactly $n replicas running, got $run running and $other starting or paused"
			docker ps -a --filter "label=$label" --filter "label=replicationController=$controller" \
				--format '{{.Names}}\t{{.Status}}' >&2
			return 1
		fi
		sleep 0.5
	done
}

# kill_one kills one running replica and prints how long the manager took to
# have 4 running again. It kills rather than removes: a running manager
# renames a dead container out of its slot, and a rename during a
# "docker rm -f" makes Docker 20.10 fail the removal half-way and list a
# ghost for good (see live_states).
kill_one() {
	local victim t
	victim=$(docker ps -q --filter "label=$label" --filter "label=replicationController=$controller" | head -n 1)
	t=$(now)
	docker kill "$victim" >/dev/null
	wait_for "$controller to be back at 4 running" running_is 4 || return 1
	since "$t"
}

smoke() {
	local mode=single t
	if [[ -n $(running_mode) ]]; then
		die "a lab runs already; the smoke test needs its own: run scripts/lab/lab.sh down first"
	fi
	trap 'smoke_exit $?' EXIT
	trap 'exit 130' INT TERM
	# The images are what is under test: build them from this tree unless
	# told otherwise.
	LAB_REBUILD=${LAB_REBUILD:-1} build_images
	if [[ -n ${LAB_SMOKE_MODE:-} ]]; then
		mode=$LAB_SMOKE_MODE
		[[ $mode == single || $mode == ha ]] || die "LAB_SMOKE_MODE must be single or ha, got $mode"
	elif has_leader_elect; then
		mode=ha
	else
		note "NOTE: the manager has no --leader-elect yet: the HA part (two managers, handover) is skipped; smoke runs the single-manager path"
	fi
	t=$(now)
	start "$mode"
	running_is 2 || { log "FAIL: $controller did not reach 2 running replicas"; return 1; }
	note "the $mode lab is up in $(since "$t")s"

	rcctl scale "$controller" --replicas 4 >/dev/null
	t=$(now)
	wait_for "4 running replicas of $controller" running_is 4
	note "scaled $controller to 4 in $(since "$t")s"
	holds_at 4 3

	if [[ $mode == ha ]]; then
		smoke_ha
	else
		smoke_single
	fi
	holds_at 4 5
	note "PASS: the $mode lab smoke test"
}

smoke_single() {
	local m t code
	m=$(managers)
	docker kill "$m" >/dev/null
	log "killed the manager; its containers keep running"
	holds_at 4 3
	docker rm -f "$(docker ps -q --filter "label=$label" --filter "label=replicationController=$controller" | head -n 1)" >/dev/null
	running_is 3 || { log "FAIL: want 3 running with the manager down, got $(replicas running)"; return 1; }
	t=$(now)
	docker start "$m" >/dev/null
	wait_ready 1
	wait_for "$controller to be back at 4 running" running_is 4
	note "restarted manager re-converged $controller to 4 in $(since "$t")s (start to 4 running)"
	holds_at 4 2
	t=$(kill_one)
	note "replaced a killed replica in ${t}s"
	holds_at 4 2
	t=$(now)
	docker stop --time 30 "$m" >/dev/null
	code=$(docker inspect -f '{{.State.ExitCode}}' "$m")
	note "SIGTERM stopped the manager in $(since "$t")s with exit code $code"
	[[ $code == 0 ]] || { log "FAIL: want exit code 0 after SIGTERM"; return 1; }
	holds_at 4 2
	docker start "$m" >/dev/null
	wait_ready 1
}

smoke_ha() {
	local lead standby t stopper code
	wait_for "one leading manager (from $(leader_source))" leader
	lead=$(leader)
	standby=$(managers | grep -v "^$lead" | head -n 1)
	log "$(service_of "$lead") leads, $(service_of "$standby") stands by (read from $(leader_source))"

	t=$(now)
	docker kill "$lead" >/dev/null
	wait_for "$(service_of "$standby") to take over" leader_is "$standby"
	note "HANDOVER after docker kill of the leader: $(since "$t")s"
	holds_at 4 3
	t=$(kill_one)
	note "the new leader replaced a killed replica in ${t}s"
	holds_at 4 2

	docker start "$lead" >/dev/null
	wait_for "$(service_of "$lead") to run again" manager_live "$lead"
	sleep 2
	leader_is "$standby" || { log "FAIL: the restarted manager took the lead from $(service_of "$standby")"; return 1; }
	log "$(service_of "$lead") is back as the standby"

	t=$(now)
	docker stop --time 30 "$standby" >/dev/null &
	stopper=$!
	wait_for "$(service_of "$lead") to take over after SIGTERM" leader_is "$lead"
	note "HANDOVER after SIGTERM to the leader (it resigns): $(since "$t")s"
	wait "$stopper"
	code=$(docker inspect -f '{{.State.ExitCode}}' "$standby")
	note "the resigning leader exited with code $code"
	[[ $code == 0 ]] || { log "FAIL: want exit code 0 after SIGTERM"; return 1; }
	holds_at 4 3
}

# ---- main ----------------------------------------------------------------

cmd=${1:-}
(($# > 0)) && shift
case "$cmd" in
up) build_images; start single; print_usage ;;
ha) build_images; start ha; print_usage ;;
down) down ;;
status) status ;;
smoke) smoke ;;
rcctl) rcctl "$@" ;;
images) build_images ;;
-h | --help | help) usage 0 ;;
*) usage 2 >&2 ;;
esac
