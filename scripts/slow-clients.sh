#!/usr/bin/env bash
# Slow clients: `marquee serve` (SQLite, 1,000 ads) loaded with the ad list
# open loop at 50% of its closed-loop maximum, in alternating 10 s rounds
# without and with N trickling clients (`marquee bench -slow-clients N`:
# each sends a request line and then a header byte every 2 s, from
# loopback addresses 127.0.0.2… at 500 each, until the server's read
# timeout cuts it, then reconnects; in a process of their own). Prints per
# round the other clients' p99 without them, with them on another instance
# on the same machine (what the slow clients' own load costs two shared
# cores), and with them on this instance; and the server's RSS and
# goroutines. Goal: p99 with ≤ 2× without, and memory bounded.
#
#   scripts/slow-clients.sh [N] [ROUNDS]        default 10000 3
set -euo pipefail
n=${1:-10000}
rounds=${2:-3}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee
"$tmp/marquee" seed -data "$tmp/d" -ads 1000 -scheduled 0 -expired 0 >/dev/null
addr=127.0.0.1:18996 decoy=127.0.0.1:18997
cp -r "$tmp/d" "$tmp/decoy"
"$tmp/marquee" serve -data "$tmp/d" -addr $addr 2>"$tmp/serve.log" &
pid=$!
"$tmp/marquee" serve -data "$tmp/decoy" -addr $decoy 2>/dev/null &
until curl -sf http://$addr/readyz >/dev/null && curl -sf http://$decoy/readyz >/dev/null; do sleep 0.2; done
rss() { awk '/VmRSS/ {print int($2 / 1024)}' /proc/$pid/status; }
gor() { curl -s http://$addr/metrics | awk '/^go_goroutines / {print $2}'; }
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
"$tmp/marquee" bench -target http://$addr -scenario ads -d 5s -rounds 1 -json "$tmp/max.json" >/dev/null
rate=$(field "$tmp/max.json" 'round(r["reqPerSec"] / 2)')
# measure NAME: the ad list's p99 (ms) over 10 s.
measure() {
	"$tmp/marquee" bench -target http://$addr -scenario ads -rate "$rate" -d 10s -rounds 1 -warmup 1s -json "$tmp/$1.json" >/dev/null
	field "$tmp/$1.json" 'r["latency"]["p99"] / 1000'
}
# slow TARGET: N slow clients against TARGET for 20 s, in a process of their
# own (loading /healthz at 1 req/s meanwhile), so that their goroutines do
# not share the measuring client's scheduler.
slow() {
	"$tmp/marquee" bench -target "http://$1" -scenario url -path /healthz -rate 1 -d 20s -rounds 1 -warmup 0 \
		-slow-clients "$n" >"$tmp/slow.out" &
	slowpid=$!
	sleep 5
}
echo "ad list at $rate req/s (50% of the closed-loop maximum); $n slow clients"
echo
echo "| round | p99, no slow clients | p99, slow clients on another instance (same machine) | p99, slow clients on this instance | RSS without → with (peak) | goroutines with | slow clients cut and reopened |"
echo "|--:|--:|--:|--:|--:|--:|--:|"
for r in $(seq "$rounds"); do
	p0=$(measure none)
	slow $decoy
	pd=$(measure decoy)
	wait $slowpid
	sleep 12 # the decoy's read timeout closes what is left
	before=$(rss)
	(while true; do rss; sleep 0.5; done) >"$tmp/rss" &
	sampler=$!
	slow $addr
	p1=$(measure with)
	gor >"$tmp/gor"
	wait $slowpid
	kill $sampler
	peak=$(sort -n "$tmp/rss" | tail -1)
	cut=$(sed -n 's/.* \([0-9]*\) cut by the server.*/\1/p' "$tmp/slow.out")
	printf '| %d | %.2f ms | %.2f ms (%.1f×) | %.2f ms (**%.1f×**) | %d → %d MB | %s | %s |\n' "$r" "$p0" "$pd" "$(echo "$pd / $p0" | bc -l)" \
		"$p1" "$(echo "$p1 / $p0" | bc -l)" "$before" "$peak" "$(cat "$tmp/gor")" "$cut"
	sleep 12
done
