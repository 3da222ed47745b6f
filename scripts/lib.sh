# Sourced by the scripts that build and run Marquee (after they read
# their arguments): strict mode, the repository as the working directory,
# a temporary directory $tmp removed — and background jobs killed — at
# exit, and a fresh build of the binary at $tmp/marquee.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/marquee" ./cmd/marquee
