#!/usr/bin/env bash
# The miss goals of docs/benchmarks.md "Look-ups at 1,000,000 keys with a
# 10% cache": GET /r/{code} over 1,000,000 links and GET /api/v1/ad/{id}
# over 1,000,000 ads (Zipf s = 1.01), each instance's cache holding
# 100,000 entries, closed loop against the same-stack hello-world in
# alternating rounds; prints the ratio (median of the per-round ratios;
# goal ≥ 0.70) and the measured hit ratio (the offline ideal at this
# trace is 0.840: go test ./cache -run XXX -bench HitRatio -benchtime 1x).
#
#   scripts/misses.sh [DURATION] [ROUNDS]        default 5s 5
set -euo pipefail
d=${1:-5s}
rounds=${2:-5}
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee
row() { # name, bench flags…
	local name=$1
	shift
	"$tmp/marquee" bench "$@" -baseline -d "$d" -rounds "$rounds" -json "$tmp/r.json" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
	scripts/throughput-row.py "$tmp/r.json" "$name"
}
echo "| route | req/s | hello-world req/s | ratio per round | median | hit ratio |"
echo "|---|--:|--:|---|--:|--:|"
row "GET /r/{code}, 1,000,000 links" -scenario links -links 1000000 -serve-flags "-link-cache 100000"
row "GET /api/v1/ad/{id}, 1,000,000 ads" -scenario ad-by-id -ads 1000000 -serve-flags "-ad-cache 100000"
