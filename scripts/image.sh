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
scripts/build.sh "$ctx/bin" "linux/$(go env GOARCH)"
cp "$ctx/bin/marquee-linux-$(go env GOARCH)" "$ctx/marquee"
cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
echo "marquee:x:65532:65532:marquee:/data:/sbin/nologin" >"$ctx/passwd"
echo "marquee:x:65532:" >"$ctx/group"
mkdir "$ctx/data"
buildah --storage-driver vfs --root "$root/storage" --runroot "$root/run" \
	bud --isolation chroot -f deploy/Containerfile -t "$tag" "$ctx"
