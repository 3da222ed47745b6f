#!/usr/bin/env bash
# A reports flush under load: `marquee serve` with 2,000 ads takes beacons
# at RATE/s over 120,000 report keys (2,000 ads × 20 countries × 3
# platforms, a random uid each) while `marquee bench` measures the
# open-loop latency of GET /api/v1/ad at half its maximum against a
# same-stack hello-world; then it prints the flushes' durations
# (marquee_reports_flush_duration_seconds) and the rows they added.
#
#   scripts/reports-flush.sh [DURATION] [RATE]     default 60s 8000
set -euo pipefail
dur=${1:-60s}
rate=${2:-8000}
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee
"$tmp/marquee" seed -data "$tmp/d" -ads 2000 -scheduled 0 -expired 0 >/dev/null
"$tmp/marquee" serve -data "$tmp/d" -addr 127.0.0.1:18991 -insecure-admin -reports-flush 10s 2>"$tmp/serve.log" &
until curl -sf http://127.0.0.1:18991/readyz >/dev/null; do sleep 0.2; done

# 120,000 distinct keys, each path once; uids cycle over 500,000.
awk 'BEGIN {
	split("US GB DE FR TW JP BR IN CA AU ES IT NL SE PL MX KR ID TR ZA", cc, " ")
	split("android ios web", pf, " ")
	srand(1)
	for (i = 0; i < 120000; i++) {
		printf "/e?type=impression&ad=%d&country=%s&platform=%s&uid=u%d\n", 1 + i % 2000, cc[1 + int(i / 2000) % 20], pf[1 + int(i / 40000)], int(rand() * 500000)
	}
}' >"$tmp/beacons.txt"

"$tmp/marquee" bench -target http://127.0.0.1:18991 -scenario url -paths "$tmp/beacons.txt" -rate "$rate" -d "$dur" -rounds 1 -warmup 0 -c 16 >"$tmp/beacons.out" &
beacons=$!
sleep 2
"$tmp/marquee" bench -target http://127.0.0.1:18991 -scenario ads -ads 2000 -rate 50% -baseline -d 5s -rounds 4
wait $beacons
tail -3 "$tmp/beacons.out"
sleep 11 # one more flush
curl -s http://127.0.0.1:18991/metrics | grep -E "^marquee_reports_(flush_duration_seconds_(bucket|sum|count)|rows_upserted_total|events_counted_total)"
curl -s http://127.0.0.1:18991/metrics | awk '/^marquee_reports_flush_duration_seconds_sum/ {s = $2} /^marquee_reports_flush_duration_seconds_count/ {n = $2} END {printf "mean flush %.3f s over %d flushes\n", s / n, n}'
