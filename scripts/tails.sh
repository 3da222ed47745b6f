#!/usr/bin/env bash
# The tail-latency goals of docs/benchmarks.md "Tails at half load": each
# scenario open loop at 50% of its closed-loop maximum, alternating rounds
# with the same-stack hello-world, without and with an admin client writing
# 10 ads a second; prints one markdown row per run (the p99 ratio is the
# median of the per-round ratios target/hello-world; goal ≤ 2).
#
#   scripts/tails.sh [DURATION] [ROUNDS]        default 10s 5
set -euo pipefail
d=${1:-10s}
rounds=${2:-5}
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee
run() { # name, bench flags…
	local name=$1
	shift
	for w in 0 10; do
		"$tmp/marquee" bench "$@" -rate 50% -baseline -d "$d" -rounds "$rounds" -writes $w -json "$tmp/r.json" >"$tmp/out" 2>&1 ||
			{ cat "$tmp/out"; exit 1; }
		python3 - "$name" $w "$tmp/r.json" <<'PY'
import json, sys
name, writes, rep = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
per = [(r["latency"]["p99"], h["latency"]["p99"]) for r in rep["runs"] if r["kind"] == "measure" and r["server"] == "target"
       for h in rep["runs"] if h["kind"] == "measure" and h["server"] == "hello" and h["round"] == r["round"]]
rounds = ", ".join(f"{t/1000:.2f}/{h/1000:.2f}" for t, h in per)
hit = f' (hit ratio {rep["cache"]["hitRatio"]:.3f})' if rep.get("cache") else ""
print(f'| {name}{hit} | {writes}/s | {rep["rate"]:,.0f} | {rounds} ms | **{rep["p99Ratio"]:.2f}** |')
PY
	done
}
echo "| scenario | ad writes | req/s (50%) | p99 target/hello-world per round | median ratio |"
echo "|---|--:|--:|---|--:|"
run "ad list, 1,000 ads" -scenario ads -ads 1000
run "ad list, 1,000,000 ads" -scenario ads -ads 1000000
run "redirects, 1,000,000 links, 10% cache" -scenario links -links 1000000 -serve-flags "-link-cache 100000"
run "beacons with reports" -scenario events
