#!/usr/bin/env bash
# Throughput of GET /api/v1/ad under the mixed query load of scripts/ads.lua,
# as a ratio to a fasthttp hello-world returning a body of the same average
# size, both loaded by `wrk -t2 -c64` in the same run, alternating rounds.
# Prints each round, then the median of the per-round ratios, and the
# servers' CPU time per request (from /proc, less noisy than req/s on a
# shared machine).
#
#   scripts/wrk-ads.sh ADS [ROUNDS] [DURATION]     e.g. scripts/wrk-ads.sh 1000 10 6s
#
# Needs wrk (apt-get install -y wrk). Seeds a temporary data dir with ADS
# ads, all active.
set -euo pipefail
ads=${1:?usage: $0 ADS [ROUNDS] [DURATION]}
rounds=${2:-10}
dur=${3:-6s}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/marquee" ./cmd/marquee
"$tmp/marquee" seed -data "$tmp/data" -ads "$ads" -scheduled 0 -expired 0 2>/dev/null
"$tmp/marquee" serve -data "$tmp/data" -addr 127.0.0.1:18180 -insecure-admin 2>"$tmp/serve.log" &
mpid=$!
until curl -sf http://127.0.0.1:18180/readyz >/dev/null; do sleep 0.2; done
size=$(CALIBRATE=1 wrk -t1 -c4 -d3s -s scripts/ads.lua http://127.0.0.1:18180 | sed -n 's/^average body: \([0-9]*\) bytes.*/\1/p')
"$tmp/marquee" hello -addr 127.0.0.1:18181 -size "$size" 2>/dev/null &
hpid=$!
until curl -sf http://127.0.0.1:18181/ >/dev/null; do sleep 0.2; done
rss=$(awk '/VmRSS/ {print $2}' /proc/$mpid/status)

cpu() { awk '{print $14+$15}' "/proc/$1/stat"; } # utime+stime, clock ticks
# load URL PID: prints "req/s µs-of-server-CPU-per-request"
load() {
	local c0 c1 out
	c0=$(cpu "$2")
	out=$(wrk -t2 -c64 -d"$dur" -s scripts/ads.lua "$1")
	c1=$(cpu "$2")
	echo "$out" | awk -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" '
		/requests in/ {n=$1} /Requests\/sec/ {r=$2}
		END {printf "%.0f %.2f\n", r, c*1e6/hz/n}'
}
echo "ads=$ads avg_body=${size}B marquee_rss=${rss}kB cpu=$(nproc)x$(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo) $(go version | cut -d' ' -f3)"
: >"$tmp/ratios"
for r in $(seq "$rounds"); do
	read -r h hc <<<"$(load http://127.0.0.1:18181 $hpid)"
	read -r m mc <<<"$(load http://127.0.0.1:18180 $mpid)"
	ratio=$(awk -v m="$m" -v h="$h" 'BEGIN{printf "%.3f", m/h}')
	echo "$ratio $hc $mc $h $m" >>"$tmp/ratios"
	echo "round $r: hello $h req/s (${hc} µs CPU/req), marquee $m req/s (${mc} µs CPU/req), ratio $ratio"
done
sort -n "$tmp/ratios" | awk '{r[NR]=$1; h+=$2; m+=$3; hr+=$4; mr+=$5} END {
	med = (NR % 2) ? r[(NR+1)/2] : (r[NR/2] + r[NR/2+1]) / 2
	printf "mean req/s: hello %.0f, marquee %.0f\n", hr/NR, mr/NR
	printf "median ratio %.3f (min %.3f, max %.3f); server CPU per request: hello %.2f µs, marquee %.2f µs (CPU ratio %.3f)\n", med, r[1], r[NR], h/NR, m/NR, h/m }'
