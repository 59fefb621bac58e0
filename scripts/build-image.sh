#!/usr/bin/env bash
# build-image.sh builds one cmd/<name> binary as a static Go binary
# (CGO_ENABLED=0) and wraps it in a FROM scratch image, because no image
# registry is reachable here: nothing can be pulled, not even a base image.
#
#   scripts/build-image.sh [--cmd demo-task] [--bin-name task]
#                          [--healthcheck 'HEALTHCHECK ARGS' | --no-healthcheck]
#                          [--add NAME]... [IMAGE]
#
# IMAGE defaults to <cmd>:latest (demo-task:latest). The binary is /<bin-name>
# and the image's CMD is ["/<bin-name>"], so that a controller's
# "command": "/task --listen :8080" replaces it. demo-task images get a
# HEALTHCHECK running "/task healthcheck" unless --no-healthcheck is given.
# Each --add NAME builds cmd/NAME too and puts it at /NAME, e.g. the lab's
# manager image carries /rcctl for "docker exec".
#
# The legacy builder is used (DOCKER_BUILDKIT=0): the Docker CLI's default,
# BuildKit, needs the buildx plugin, which is not installed here, and the
# legacy builder works with every engine from 20.10 on.
set -euo pipefail

usage() {
	# The header comment above, without its "# ".
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
	exit "${1:-0}"
}

cmd=demo-task
bin_name=task
healthcheck=default
image=
extra=()

while (($# > 0)); do
	case "$1" in
	--cmd) cmd=${2:?--cmd needs a value}; shift 2 ;;
	--cmd=*) cmd=${1#*=}; shift ;;
	--bin-name) bin_name=${2:?--bin-name needs a value}; shift 2 ;;
	--bin-name=*) bin_name=${1#*=}; shift ;;
	--healthcheck) healthcheck=${2:?--healthcheck needs a value}; shift 2 ;;
	--healthcheck=*) healthcheck=${1#*=}; shift ;;
	--no-healthcheck) healthcheck=; shift ;;
	--add) extra+=("${2:?--add needs a value}"); shift 2 ;;
	--add=*) extra+=("${1#*=}"); shift ;;
	-h | --help) usage 0 ;;
	-*) echo "build-image.sh: unknown flag $1" >&2; usage 2 >&2 ;;
	*)
		if [[ -n $image ]]; then
			echo "build-image.sh: more than one IMAGE given" >&2
			exit 2
		fi
		image=$1; shift ;;
	esac
done
image=${image:-$cmd:latest}

if [[ $healthcheck == default ]]; then
	healthcheck=
	if [[ $cmd == demo-task ]]; then
		# Docker 20.10 runs the first probe one interval after the start, so
		# the interval is how long a new container stays "starting".
		healthcheck="--interval=2s --timeout=3s --retries=3 CMD [\"/$bin_name\", \"healthcheck\"]"
	fi
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for c in "$cmd" ${extra[@]+"${extra[@]}"}; do
	if [[ ! -d $root/cmd/$c ]]; then
		echo "build-image.sh: no such command: $root/cmd/$c" >&2
		exit 2
	fi
done
for c in ${extra[@]+"${extra[@]}"}; do
	if [[ $c == "$bin_name" ]]; then
		echo "build-image.sh: --add $c collides with the main binary /$bin_name" >&2
		exit 2
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/build-image.XXXXXX")
trap 'rm -rf "$work"' EXIT

(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$work/$bin_name" "./cmd/$cmd")
for c in ${extra[@]+"${extra[@]}"}; do
	(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$work/$c" "./cmd/$c")
done

{
	echo "FROM scratch"
	echo "COPY $bin_name /$bin_name"
	for c in ${extra[@]+"${extra[@]}"}; do
		echo "COPY $c /$c"
	done
	echo "LABEL org.opencontainers.image.title=$cmd"
	if [[ -n $healthcheck ]]; then
		echo "HEALTHCHECK $healthcheck"
	fi
	echo "CMD [\"/$bin_name\"]"
} >"$work/Dockerfile"

# The legacy builder prints a deprecation notice on every run: show the
# output only when the build fails.
previous=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
if ! out=$(DOCKER_BUILDKIT=0 docker build --quiet --tag "$image" "$work" 2>&1); then
	echo "$out" >&2
	exit 1
fi
# A rebuild moves the tag: remove the image it leaves untagged, unless a
# container still uses it: then Docker refuses, and the old image stays.
if [[ -n $previous && $previous != "$(docker image inspect --format '{{.Id}}' "$image")" ]]; then
	docker image rm "$previous" >/dev/null 2>&1 || true
fi
echo "$image"
