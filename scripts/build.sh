#!/usr/bin/env bash
# Static release binaries: CGO_ENABLED=0, trimmed paths, the version,
# commit and build time stamped in (marquee version, marquee_build_info).
#
#   scripts/build.sh OUTDIR [GOOS/GOARCH …]     default: this machine's
# Writes OUTDIR/marquee-GOOS-GOARCH[.exe] and OUTDIR/SHA256SUMS.
set -euo pipefail
out=${1:?usage: scripts/build.sh OUTDIR [GOOS/GOARCH …]}
shift
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("$(go env GOOS)/$(go env GOARCH)")
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$out"
for t in "${targets[@]}"; do
	os=${t%/*} arch=${t#*/}
	ext=""
	[ "$os" = windows ] && ext=.exe
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X main.version=$version -X main.commit=$commit -X main.built=$built" \
		-o "$out/marquee-$os-$arch$ext" ./cmd/marquee
done
(cd "$out" && sha256sum marquee-* >SHA256SUMS)
