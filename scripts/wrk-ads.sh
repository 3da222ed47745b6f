#!/usr/bin/env bash
# Throughput of GET /api/v1/ad under the mixed query load of scripts/ads.lua,
# as a ratio to fasthttp hello-worlds loaded by `wrk -t2 -c64` in the same
# run, alternating rounds:
#   hello   returns one fixed body of the load's average size (the figure the
#           issues are judged by);
#   replay  returns, for each request, the very bytes marquee returned for it
#           (captured before the rounds): the same output with no logic, so
#           marquee/replay is the cost of Marquee's own work.
# Prints each round, the median of the per-round ratios, and each server's
# CPU time per request (from /proc; steadier than req/s on a shared machine).
#
#   scripts/wrk-ads.sh ADS [ROUNDS] [DURATION]     e.g. scripts/wrk-ads.sh 1000 10 5s
#
# Needs wrk (apt-get install -y wrk). Seeds a temporary data dir with ADS
# ads, all active.
set -euo pipefail
ads=${1:?usage: $0 ADS [ROUNDS] [DURATION]}
rounds=${2:-10}
dur=${3:-5s}
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee
"$tmp/marquee" seed -data "$tmp/data" -ads "$ads" -scheduled 0 -expired 0 2>/dev/null
"$tmp/marquee" serve -data "$tmp/data" -addr 127.0.0.1:18180 -insecure-admin 2>"$tmp/serve.log" &
mpid=$!
until curl -sf http://127.0.0.1:18180/readyz >/dev/null; do sleep 0.2; done
size=$(CALIBRATE=1 wrk -t1 -c4 -d3s -s scripts/ads.lua http://127.0.0.1:18180 | sed -n 's/^average body: \([0-9]*\) bytes.*/\1/p')
DUMP_PATHS="$tmp/paths" wrk -t1 -c1 -d1s -s scripts/ads.lua http://127.0.0.1:18180 >/dev/null
"$tmp/marquee" hello -addr 127.0.0.1:18181 -size "$size" 2>/dev/null &
hpid=$!
"$tmp/marquee" hello -addr 127.0.0.1:18182 -capture http://127.0.0.1:18180 -paths "$tmp/paths" 2>/dev/null &
rpid=$!
until curl -sf http://127.0.0.1:18181/ >/dev/null; do sleep 0.2; done
until curl -sf "http://127.0.0.1:18182$(head -1 "$tmp/paths")" >/dev/null; do sleep 0.2; done
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
: >"$tmp/rounds"
for r in $(seq "$rounds"); do
	read -r h hc <<<"$(load http://127.0.0.1:18181 $hpid)"
	read -r p pc <<<"$(load http://127.0.0.1:18182 $rpid)"
	read -r m mc <<<"$(load http://127.0.0.1:18180 $mpid)"
	echo "$h $hc $p $pc $m $mc" >>"$tmp/rounds"
	echo "round $r: hello $h req/s (${hc} µs CPU/req), replay $p req/s (${pc} µs), marquee $m req/s (${mc} µs); marquee/hello $(awk -v m="$m" -v h="$h" 'BEGIN{printf "%.3f", m/h}'), marquee/replay $(awk -v m="$m" -v p="$p" 'BEGIN{printf "%.3f", m/p}')"
done
awk '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{ n++; h += $1; hc += $2; p += $3; pc += $4; m += $5; mc += $6; rh[n] = $5/$1; rp[n] = $5/$3; ph[n] = $3/$1 }
END {
	printf "mean req/s: hello %.0f, replay %.0f, marquee %.0f\n", h/n, p/n, m/n
	printf "median ratios: marquee/hello %.3f, replay/hello %.3f, marquee/replay %.3f\n", median(rh, n), median(ph, n), median(rp, n)
	printf "server CPU per request: hello %.2f µs, replay %.2f µs, marquee %.2f µs\n", hc/n, pc/n, mc/n
}' "$tmp/rounds"
