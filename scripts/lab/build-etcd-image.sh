#!/usr/bin/env bash
# build-etcd-image.sh builds a real etcd server as a static binary
# (CGO_ENABLED=0) from the go.etcd.io/etcd/server/v3 module this project
# already depends on, at the version go.mod selects, and wraps it in a
# FROM scratch image: no image registry is reachable, so etcd cannot be pulled.
#
#   scripts/lab/build-etcd-image.sh [IMAGE]      (default etcd:lab)
#
# The server's main package is go.etcd.io/etcd/server/v3 itself. It imports
# packages (cobra, for the gateway subcommand) that the daemon does not, so
# the project's go.sum may lack their checksums. The build therefore runs in
# a throw-away copy of go.mod and go.sum with -mod=mod: the versions are the
# project's, the missing checksums are fetched through the Go module proxy
# and checked against the checksum database, and the work tree is never
# touched.
#
# The image is /etcd with CMD ["/etcd"]; the lab's compose files pass the
# flags. It has no shell and no /tmp: give it a data volume.
set -euo pipefail

case "${1:-}" in
-h | --help)
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
	exit 0 ;;
-*) echo "build-etcd-image.sh: unknown flag $1" >&2; exit 2 ;;
esac
image=${1:-etcd:lab}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/build-etcd-image.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir "$work/mod" "$work/ctx"
cp "$root/go.mod" "$root/go.sum" "$work/mod/"
version=$(cd "$work/mod" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
(cd "$work/mod" && GOFLAGS=-mod=mod CGO_ENABLED=0 \
	go build -trimpath -ldflags='-s -w' -o "$work/ctx/etcd" go.etcd.io/etcd/server/v3)

cat >"$work/ctx/Dockerfile" <<EOF
FROM scratch
COPY etcd /etcd
LABEL org.opencontainers.image.title=etcd org.opencontainers.image.version=$version
EXPOSE 2379 2380
CMD ["/etcd"]
EOF

# The legacy builder (no buildx here), quiet unless the build fails.
previous=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
if ! out=$(DOCKER_BUILDKIT=0 docker build --quiet --tag "$image" "$work/ctx" 2>&1); then
	echo "$out" >&2
	exit 1
fi
# A rebuild moves the tag: remove the image it leaves untagged, unless a
# container still uses it: then Docker refuses, and the old image stays.
if [[ -n $previous && $previous != "$(docker image inspect --format '{{.Id}}' "$image")" ]]; then
	docker image rm "$previous" >/dev/null 2>&1 || true
fi
echo "$image (etcd $version)"
