#!/usr/bin/env bash
# Prepares the build context of deploy/Containerfile in DIR: static
# binaries for each ARCH (marquee-linux-ARCH, by scripts/build.sh), this
# machine's CA bundle, a passwd and group line for uid 65532, an empty data/.
#
#   scripts/image-context.sh DIR ARCH [ARCH …]      e.g. /tmp/ctx amd64 arm64
set -euo pipefail
dir=${1:?usage: scripts/image-context.sh DIR ARCH [ARCH …]}
shift
[ $# -gt 0 ] || { echo "usage: scripts/image-context.sh DIR ARCH [ARCH …]" >&2; exit 2; }
cd "$(dirname "$0")/.."
mkdir -p "$dir/data"
targets=()
for a in "$@"; do targets+=("linux/$a"); done
scripts/build.sh "$dir" "${targets[@]}"
rm -f "$dir/SHA256SUMS"
cp /etc/ssl/certs/ca-certificates.crt "$dir/ca-certificates.crt"
echo "marquee:x:65532:65532:marquee:/data:/sbin/nologin" >"$dir/passwd"
echo "marquee:x:65532:" >"$dir/group"
