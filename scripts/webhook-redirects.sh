#!/usr/bin/env bash
# Redirects with and without a click webhook configured, against the
# same-stack hello-world, alternated (docs/benchmarks.md, issue 29):
#   scripts/webhook-redirects.sh [runs] [duration]
# It seeds 100,000 links, runs marquee serve on 127.0.0.1:18080 and a
# receiver (marquee hello, 200 to every POST) on 127.0.0.1:18081, and runs
# `marquee bench -scenario links` against the server in turn with no
# webhook, with a webhook on the most clicked link's clicks (fixture
# code u662222, about 8% of the Zipf traffic), and with one on every
# click (every redirect delivered: the worst case).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
d=${2:-3s}
bin=$(mktemp -d)/marquee
go build -o "$bin" ./cmd/marquee
data=$(mktemp -d)
"$bin" seed -data "$data" -ads 0 -links 100000 >/dev/null
"$bin" serve -data "$data" -addr 127.0.0.1:18080 -insecure-admin -webhooks-allow-http -webhooks-allow-private 2>"$data/serve.log" &
serve=$!
"$bin" hello -addr 127.0.0.1:18081 2>/dev/null &
hello=$!
trap 'kill $serve $hello 2>/dev/null; wait 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 50); do curl -fs 127.0.0.1:18080/readyz >/dev/null && break; sleep 0.2; done
for i in $(seq "$runs"); do
	for hook in off one all; do
		id=""
		case $hook in
		one) body='{"url":"http://127.0.0.1:18081/in","events":["click"],"link":"u662222"}' ;;
		all) body='{"url":"http://127.0.0.1:18081/in","events":["click"]}' ;;
		esac
		if [ "$hook" != off ]; then
			id=$(curl -fs -X POST 127.0.0.1:18080/api/v1/webhooks -H 'Content-Type: application/json' -d "$body" | sed -E 's/.*"id":([0-9]+).*/\1/')
		fi
		ratio=$("$bin" bench -scenario links -target http://127.0.0.1:18080 -links 100000 -baseline -d "$d" -rounds 3 2>&1 |
			sed -nE 's/.*target\/hello-world = ([0-9.]+).*/\1/p' | head -1)
		delivered=""
		if [ -n "$id" ]; then
			delivered=$(curl -fs "127.0.0.1:18080/metrics" | sed -nE 's/^marquee_webhook_deliveries_total\{result="ok"\} ([0-9.e+]+)/\1/p')
			curl -fs -X DELETE "127.0.0.1:18080/api/v1/webhooks/$id" >/dev/null
		fi
		echo "run $i webhook $hook: redirects/hello-world = $ratio${delivered:+ (deliveries ok so far: $delivered)}"
	done
done
