#!/usr/bin/env bash
# Memory under a burst of writes at catalog scale: seeds ADS ads (SQLite),
# starts `marquee serve`, takes its steady RSS (median of 10 samples over
# 10 s), replaces WRITES random ads as fast as 8 parallel clients can, and
# samples RSS every 0.2 s during the burst and 20 s after it. Prints the
# steady RSS, the peak, and the peak ÷ steady (the goal is < 1.5).
#
#   scripts/write-burst.sh [ADS] [WRITES] [serve flags…]   default 1000000 1000
set -euo pipefail
ads=${1:-1000000}
writes=${2:-1000}
shift 2 || true
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee
"$tmp/marquee" seed -data "$tmp/d" -ads "$ads" -scheduled 0 -expired 0 >/dev/null
addr=127.0.0.1:18995
"$tmp/marquee" serve -data "$tmp/d" -addr $addr -admin-token burst-token "$@" 2>"$tmp/serve.log" &
pid=$!
until curl -sf http://$addr/readyz >/dev/null; do sleep 0.2; done
rss() { awk '/VmRSS/ {print int($2 / 1024)}' /proc/$pid/status; }
sleep 10
steady=$(for _ in $(seq 10); do rss; sleep 1; done | sort -n | sed -n 5p)
(while true; do rss; sleep 0.2; done) >"$tmp/rss" &
sampler=$!
end=$(date -u -d '+2 days' +%Y-%m-%dT%H:%M:%SZ)
start=$(date +%s.%N)
seq "$writes" | xargs -P 8 -I{} bash -c 'curl -s -o /dev/null -w "%{http_code}\n" -X PUT \
	-H "Authorization: Bearer burst-token" -H "Content-Type: application/json" \
	"http://'$addr'/api/v1/ad/$(( ($RANDOM * 32768 + $RANDOM) % '"$ads"' + 1 ))" \
	-d "{\"title\":\"burst {}\",\"startAt\":\"2020-01-01T00:00:00Z\",\"endAt\":\"'"$end"'\"}"' >"$tmp/codes"
took=$(echo "$(date +%s.%N) - $start" | bc)
sleep 20
kill $sampler
peak=$(sort -n "$tmp/rss" | tail -1)
echo "ads=$ads writes=$writes in ${took}s codes: $(sort "$tmp/codes" | uniq -c | tr '\n' ' ')"
echo "steady RSS ${steady} MB, peak ${peak} MB during and 20 s after the burst, peak/steady $(echo "scale=2; $peak / $steady" | bc)"
