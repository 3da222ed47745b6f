#!/usr/bin/env bash
# Throughput of GET /api/v1/ad under the mixed query load of scripts/ads.lua,
# as a ratio to a fasthttp hello-world returning a body of the same average
# size, both loaded by wrk in the same run, alternating.
#
#   scripts/wrk-ads.sh ADS [ROUNDS] [DURATION]     e.g. scripts/wrk-ads.sh 1000 3 10s
#
# Needs wrk (apt-get install -y wrk). Seeds a temporary data dir with ADS
# ads, all active.
set -euo pipefail
ads=${1:?usage: $0 ADS [ROUNDS] [DURATION]}
rounds=${2:-3}
dur=${3:-10s}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/marquee" ./cmd/marquee
"$tmp/marquee" seed -data "$tmp/data" -ads "$ads" -scheduled 0 -expired 0 2>/dev/null
"$tmp/marquee" serve -data "$tmp/data" -addr 127.0.0.1:18180 -insecure-admin 2>"$tmp/serve.log" &
until curl -sf http://127.0.0.1:18180/readyz >/dev/null; do sleep 0.2; done
size=$(CALIBRATE=1 wrk -t1 -c4 -d3s -s scripts/ads.lua http://127.0.0.1:18180 | sed -n 's/^average body: \([0-9]*\) bytes.*/\1/p')
"$tmp/marquee" hello -addr 127.0.0.1:18181 -size "$size" 2>/dev/null &
until curl -sf http://127.0.0.1:18181/ >/dev/null; do sleep 0.2; done
rss=$(awk '/VmRSS/ {print $2}' /proc/$(pgrep -f "serve -data $tmp/data")/status)

rate() { wrk -t2 -c64 -d"$dur" -s scripts/ads.lua "$1" | awk '/Requests\/sec/ {print $2}'; }
echo "ads=$ads avg_body=${size}B marquee_rss=${rss}kB"
sum_m=0; sum_h=0
for r in $(seq "$rounds"); do
	h=$(rate http://127.0.0.1:18181); m=$(rate http://127.0.0.1:18180)
	echo "round $r: hello ${h} req/s, marquee ${m} req/s, ratio $(awk -v m="$m" -v h="$h" 'BEGIN{printf "%.3f", m/h}')"
	sum_m=$(awk -v a="$sum_m" -v b="$m" 'BEGIN{print a+b}'); sum_h=$(awk -v a="$sum_h" -v b="$h" 'BEGIN{print a+b}')
done
awk -v m="$sum_m" -v h="$sum_h" -v n="$rounds" 'BEGIN{printf "mean: hello %.0f req/s, marquee %.0f req/s, ratio %.3f\n", h/n, m/n, m/h}'
