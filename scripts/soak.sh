#!/usr/bin/env bash
# A soak: `marquee serve` (SQLite, 10,000 ads, 100,000 links) under a mixed
# load for DURATION — ad lists, redirects and beacons at fixed rates (open
# loop, by `marquee bench`, a minute at a time), 10 ad writes a second and a
# reports query a second (curl) — recording each minute its RSS, goroutines,
# open files, each scenario's p99 and the errors of the minute into
# OUT.csv, and drawing OUT.png (gnuplot: apt-get install gnuplot-nox).
# Every line should be flat, and errors zero.
#
#   scripts/soak.sh [DURATION] [OUT]        default 30m docs/soak
set -euo pipefail
dur=${1:-30m}
out=${2:-docs/soak}
minutes=$(( $(date -d "1970-01-01 UTC + ${dur/m/ minutes}" +%s 2>/dev/null || echo 1800) / 60 ))
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee
"$tmp/marquee" seed -data "$tmp/d" -ads 10000 -scheduled 0 -expired 0 >/dev/null
"$tmp/marquee" seed -data "$tmp/d" -links 100000 >/dev/null
addr=127.0.0.1:18994
"$tmp/marquee" serve -data "$tmp/d" -addr $addr -admin-token soak-token -link-cache 10000 2>"$tmp/serve.log" &
pid=$!
until curl -sf http://$addr/readyz >/dev/null; do sleep 0.2; done
auth=(-H "Authorization: Bearer soak-token" -H "Content-Type: application/json")

# Writers: 10 ads a second (each replaced ad ends within two days, so the
# catalog stays the same size), and a reports query a second.
(
	i=0
	while true; do
		id=$(( 1 + i % 10000 ))
		curl -s -o /dev/null -w '%{http_code}\n' -X PUT "${auth[@]}" "http://$addr/api/v1/ad/$id" \
			-d "{\"title\":\"soak $i\",\"startAt\":\"2020-01-01T00:00:00Z\",\"endAt\":\"$(date -u -d '+2 days' +%Y-%m-%dT%H:%M:%SZ)\"}" >>"$tmp/writes"
		i=$((i + 1))
		sleep 0.1
	done
) &
(
	while true; do
		curl -s -o /dev/null -w '%{http_code}\n' "${auth[@]}" "http://$addr/api/v1/stats?top=ads&limit=10" >>"$tmp/reports"
		sleep 1
	done
) &

echo "minute,rss_mb,goroutines,open_files,ads_p99_ms,links_p99_ms,events_p99_ms,errors" >"$out.csv"
for m in $(seq 1 "$minutes"); do
	for s in ads links events; do
		rate=3000
		"$tmp/marquee" bench -target http://$addr -scenario $s -ads 10000 -links 100000 -rate $rate -d 60s -rounds 1 \
			-warmup 0 -c 16 -json "$tmp/$s.json" >/dev/null 2>&1 &
	done
	wait $(jobs -p | tail -3) 2>/dev/null || true
	rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' /proc/$pid/status)
	gor=$(curl -s http://$addr/metrics | awk '/^go_goroutines / {print $2}')
	fds=$(ls /proc/$pid/fd | wc -l)
	p99() { python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['latency']['p99']/1000, 3))" "$1"; }
	errs() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['errors'])" "$1"; }
	bad=$(( $(errs "$tmp/ads.json") + $(errs "$tmp/links.json") + $(errs "$tmp/events.json") ))
	bad=$(( bad + $(grep -vc '^20[0-9]$' "$tmp/writes" 2>/dev/null || true) + $(grep -vc '^200$' "$tmp/reports" 2>/dev/null || true) ))
	: >"$tmp/writes"
	: >"$tmp/reports"
	echo "$m,$rss,$gor,$fds,$(p99 "$tmp/ads.json"),$(p99 "$tmp/links.json"),$(p99 "$tmp/events.json"),$bad" | tee -a "$out.csv"
done

gnuplot <<EOF
set terminal pngcairo size 1200,800 noenhanced
set output "$out.png"
set yrange [0:*]
set datafile separator ","
set key autotitle columnhead outside bottom
set xlabel "minute"
set multiplot layout 3,1 title "marquee soak: ads, redirects and beacons at 3,000/s each, 10 writes/s, 1 reports query/s"
set ylabel "MB / count"
plot "$out.csv" using 1:2 with linespoints, "" using 1:3 with linespoints, "" using 1:4 with linespoints
set ylabel "p99 ms"
plot "$out.csv" using 1:5 with linespoints, "" using 1:6 with linespoints, "" using 1:7 with linespoints
set ylabel "errors"
plot "$out.csv" using 1:8 with linespoints
unset multiplot
EOF
echo "wrote $out.csv and $out.png"
