#!/usr/bin/env bash
# Updates the invalid-traffic lists vendored in third_party/ivtlists from
# npm: crawler-user-agents (MIT: patterns of declared crawlers, with
# example User-Agents) and isbot (Unlicense: patterns of bots, HTTP
# libraries and tools). Pass versions to pin them, e.g.
#   scripts/update-ivt-lists.sh 1.60.0 5.2.3
# then run `go test ./ivt` (recall and false positives against the
# corpora in ivt/testdata) and commit the result with the versions.
set -euo pipefail
cd "$(dirname "$0")/.."
crawlers=${1:-latest}
isbot=${2:-latest}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "crawler-user-agents@$crawlers" "isbot@$isbot" >/dev/null)
mkdir -p "$tmp/c" "$tmp/i"
tar xzf "$tmp"/crawler-user-agents-*.tgz -C "$tmp/c"
tar xzf "$tmp"/isbot-*.tgz -C "$tmp/i"
out=third_party/ivtlists
cp "$tmp/c/package/crawler-user-agents.json" "$out/crawler-user-agents.json"
cp "$tmp/c/package/LICENSE" "$out/LICENSE.crawler-user-agents"
cp "$tmp/i/package/LICENSE" "$out/LICENSE.isbot"
node -e 'const m=require(process.argv[1]); process.stdout.write(JSON.stringify(m.list, null, 1)+"\n")' "$tmp/i/package/index.js" >"$out/isbot.json"
node -e 'for (const f of process.argv.slice(1)) { const p=require(f); console.log(p.name+" "+p.version) }' \
	"$tmp/c/package/package.json" "$tmp/i/package/package.json" >"$out/VERSIONS"
cat "$out/VERSIONS"
