#!/usr/bin/env bash
# Redirects at 1,000,000 links with a 10% link cache on each store —
# SQLite, PostgreSQL, MySQL/MariaDB — side by side (docs/benchmarks.md,
# "MySQL and MariaDB"): for each, a fresh database seeded with
# `marquee seed -links 1000000` (timed), one `marquee serve -link-cache
# 100000` on it, and `marquee bench -target … -scenario links -links
# 1000000 -baseline` (closed loop, alternating rounds against the
# same-stack hello-world); prints a markdown row per store: seed time,
# req/s, the median of the per-round ratios, the target's hit ratio.
#
#   PG=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
#   MYSQL=mysql://root@127.0.0.1:3306/test \
#   scripts/links-db.sh [DURATION] [ROUNDS]        default 5s 5
#
# PostgreSQL gets a schema of its own (search_path=marquee_links_bench) and
# MySQL a database of its own (marquee_links_bench), dropped first; a store
# whose variable is unset is skipped. The databases run on the same
# machine, so a miss's database work shares its cores.
set -euo pipefail
d=${1:-5s}
rounds=${2:-5}
source "$(dirname "$0")/lib.sh" # set -euo pipefail, cd to the repository, $tmp, $tmp/marquee
port=18391
row() { # name, dsn
	local name=$1 dsn=$2 started
	started=$(date +%s.%N)
	"$tmp/marquee" seed -data "$tmp/$name" -db "$dsn" -ads 0 -links 1000000 >"$tmp/seed.out" 2>&1 || { cat "$tmp/seed.out"; exit 1; }
	local seeded
	seeded=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$started" "$(date +%s.%N)")
	"$tmp/marquee" serve -data "$tmp/$name" -db "$dsn" -addr "127.0.0.1:$port" -link-cache 100000 -insecure-admin \
		>"$tmp/serve.out" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.2; done
	sync
	"$tmp/marquee" bench -target "http://127.0.0.1:$port" -scenario links -links 1000000 -baseline -d "$d" -rounds "$rounds" \
		-json "$tmp/r.json" >"$tmp/out" 2>&1 || { cat "$tmp/out" "$tmp/serve.out"; exit 1; }
	kill "$pid"; wait "$pid" 2>/dev/null || true
	scripts/throughput-row.py "$tmp/r.json" "$name" "$seeded s"
}
echo "| store | seed 1,000,000 links | req/s | hello-world req/s | ratio per round | median | hit ratio |"
echo "|---|--:|--:|--:|---|--:|--:|"
row sqlite "$tmp/sqlite.db"
if [ -n "${PG:-}" ]; then
	psql -q "$PG" -c 'DROP SCHEMA IF EXISTS marquee_links_bench CASCADE' >/dev/null
	sep='?'; [[ $PG == *\?* ]] && sep='&'
	row postgres "$PG${sep}search_path=marquee_links_bench"
	psql -q "$PG" -c 'DROP SCHEMA IF EXISTS marquee_links_bench CASCADE' >/dev/null
fi
if [ -n "${MYSQL:-}" ]; then
	base=${MYSQL%%\?*}
	server=${base%/*}
	mysqlq() { # a statement for the server of $MYSQL, through its command-line client
		python3 - "$MYSQL" "$1" <<'PY'
import os, subprocess, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
env = dict(os.environ, MYSQL_PWD=urllib.parse.unquote(u.password or ""))
client = "mariadb" if subprocess.run(["sh", "-c", "command -v mariadb"], capture_output=True).returncode == 0 else "mysql"
subprocess.run([client, "-h", u.hostname, "-P", str(u.port or 3306), "-u", urllib.parse.unquote(u.username or "root"), "-e", sys.argv[2]],
               env=env, check=True)
PY
	}
	mysqlq 'DROP DATABASE IF EXISTS marquee_links_bench; CREATE DATABASE marquee_links_bench'
	row mysql "$server/marquee_links_bench"
	mysqlq 'DROP DATABASE IF EXISTS marquee_links_bench'
fi
