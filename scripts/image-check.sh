#!/usr/bin/env bash
# What CI proves about the container image (deploy/Containerfile): it
# builds without a daemon or a registry (buildah), runs (podman, runc),
# answers /readyz through a published port, runs as a non-root user, and
# says its version. Installs buildah, podman and runc from Debian when
# missing; skips with a message where they cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v buildah >/dev/null || ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	echo "image: installing buildah, podman and runc" >&2
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah podman runc >/dev/null; }; then
		echo "image: SKIPPED: buildah, podman and runc could not be installed here" >&2
		exit 0
	fi
fi
root=$(mktemp -d /var/tmp/marquee-ci-containers.XXXXXX)
name=marquee-ci-$$
tag=localhost/marquee:ci
podman=(podman --storage-driver vfs --root "$root/storage" --runroot "$root/run" --cgroup-manager cgroupfs
	--events-backend file --runtime runc)
cleanup() { "${podman[@]}" rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$root" 2>/dev/null || true; }
trap cleanup EXIT
BUILDAH_ROOT=$root scripts/image.sh "$tag" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
limits=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096) # this sandbox refuses podman's defaults
"${podman[@]}" run -d --name "$name" "${limits[@]}" -p "127.0.0.1:$port:8080" "$tag" >/dev/null
ready=""
for _ in $(seq 60); do
	if ready=$(curl -sf "http://127.0.0.1:$port/readyz"); then break; fi
	sleep 0.5
done
if [ -z "$ready" ]; then
	echo "image: FAILED: /readyz did not answer through the published port" >&2
	"${podman[@]}" logs "$name" >&2 || true
	exit 1
fi
pid=$("${podman[@]}" inspect --format '{{.State.Pid}}' "$name")
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
if [ "$uid" = 0 ]; then
	echo "image: FAILED: the server runs as root" >&2
	exit 1
fi
version=$("${podman[@]}" run --rm "${limits[@]}" --entrypoint /marquee "$tag" version | head -1)
echo "image: ok: $tag answered $ready as uid $uid; $version" >&2
