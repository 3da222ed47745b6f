#!/usr/bin/env bash
# Updates the address data vendored in third_party/ipdata from npm's
# @ip-location-db packages: the IP-to-country database
# (geo-whois-asn-country-mmdb: CC BY 4.0, NRO) and the IP-to-ASN data
# (asn: CC BY 4.0, RouteViews, NRO, DB-IP) from which the ranges of the
# hosting networks of datacenter-asns.txt are rebuilt. Pass versions to
# pin them, e.g.
#   scripts/update-ip-data.sh 2.3.2026061719 2.3.2026061719
# or a directory holding geo-whois-asn-country.mmdb, asn-ipv4.csv and
# asn-ipv6.csv (the project also publishes them as GitHub releases, its
# npm packages being deprecated by their maintainer):
#   scripts/update-ip-data.sh --from DIR
# then run `go test ./geoip ./ivt` and commit the result with the versions.
set -euo pipefail
cd "$(dirname "$0")/.."
out=third_party/ipdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "${1:-}" = "--from" ]; then
	src=$2
	mmdb=$src/geo-whois-asn-country.mmdb
	v4=$src/asn-ipv4.csv v6=$src/asn-ipv6.csv
	printf 'geo-whois-asn-country.mmdb %s\nasn %s\n' "$(date -u -r "$mmdb" +%F)" "$(date -u -r "$v4" +%F)" >"$out/VERSIONS"
else
	country=${1:-latest}
	asn=${2:-latest}
	(cd "$tmp" && npm pack --silent "@ip-location-db/geo-whois-asn-country-mmdb@$country" "@ip-location-db/asn@$asn" >/dev/null)
	mkdir -p "$tmp/c" "$tmp/a"
	tar xzf "$tmp"/ip-location-db-geo-whois-asn-country-mmdb-*.tgz -C "$tmp/c"
	tar xzf "$tmp"/ip-location-db-asn-*.tgz -C "$tmp/a"
	mmdb=$tmp/c/package/geo-whois-asn-country.mmdb
	v4=$tmp/a/package/asn-ipv4.csv v6=$tmp/a/package/asn-ipv6.csv
	cp "$tmp/c/package/NRO_LICENSE" "$out/LICENSE.NRO"
	cp "$tmp/a/package/ROUTEVIEWS-LICENSE" "$out/LICENSE.RouteViews"
	cp "$tmp/a/package/DBIP-LICENSE" "$out/LICENSE.DB-IP"
	node -e 'for (const f of process.argv.slice(1)) { const p=require(f); console.log(p.name+" "+p.version) }' \
		"$tmp/c/package/package.json" "$tmp/a/package/package.json" >"$out/VERSIONS"
fi
cp "$mmdb" "$out/country.mmdb"
go run ./third_party/ipdata/internal/gen -asns "$out/datacenter-asns.txt" -out "$out/datacenter-ranges.txt" "$v4" "$v6"
cat "$out/VERSIONS"
