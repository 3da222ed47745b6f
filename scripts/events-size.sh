#!/usr/bin/env bash
# Bytes on disk per event and compression ratio of the event files, per
# codec: runs `marquee serve`, loads it with the events scenario of
# `marquee bench` (GET /e beacons of ~120 bytes), stops it cleanly, and
# measures the finished files.
#
#   scripts/events-size.sh [DURATION]      default 8s
set -euo pipefail
dur=${1:-8s}
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee

echo "| codec | events | NDJSON bytes per event | bytes on disk per event | compression ratio |"
echo "|---|--:|--:|--:|--:|"
for codec in lz4 zstd none; do
	"$tmp/marquee" serve -data "$tmp/$codec" -addr 127.0.0.1:18990 -insecure-admin -events-codec "$codec" 2>/dev/null &
	pid=$!
	until curl -sf http://127.0.0.1:18990/readyz >/dev/null; do sleep 0.2; done
	"$tmp/marquee" bench -target http://127.0.0.1:18990 -scenario events -d "$dur" -rounds 1 -warmup 0 >/dev/null
	kill -INT $pid # a clean shutdown finishes every file
	wait $pid || true
	events=$(for f in $(find "$tmp/$codec/events" -type f); do "$tmp/marquee" events cat "$f"; done | wc -l)
	raw=$(for f in $(find "$tmp/$codec/events" -type f); do "$tmp/marquee" events cat "$f"; done | wc -c)
	disk=$(find "$tmp/$codec/events" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
	awk -v c="$codec" -v n="$events" -v r="$raw" -v d="$disk" 'BEGIN {printf "| %s | %d | %.1f | %.1f | %.2f |\n", c, n, r/n, d/n, r/d}'
done
