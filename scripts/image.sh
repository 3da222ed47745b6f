#!/usr/bin/env bash
# Builds Marquee's container image with buildah, without a daemon and
# without pulling anything (deploy/Containerfile is FROM scratch): the
# static binary from scripts/build.sh, the machine's CA bundle, a passwd
# and group line for uid 65532 and an empty /data.
#
#   scripts/image.sh [TAG]          default localhost/marquee:dev
# Storage: $BUILDAH_ROOT (default /var/tmp/marquee-containers), vfs driver.
set -euo pipefail
tag=${1:-localhost/marquee:dev}
cd "$(dirname "$0")/.."
root=${BUILDAH_ROOT:-/var/tmp/marquee-containers}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
arch=$(go env GOARCH)
scripts/image-context.sh "$ctx" "$arch"
buildah --storage-driver vfs --root "$root/storage" --runroot "$root/run" \
	bud --isolation chroot --build-arg TARGETARCH="$arch" -f deploy/Containerfile -t "$tag" "$ctx"
