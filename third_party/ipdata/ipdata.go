// Package ipdata holds the address data Marquee vendors from maintained
// public projects, used when an operator gives none of its own
// (scripts/update-ip-data.sh updates them; VERSIONS names the versions):
//
//   - country.mmdb: an IP-to-country database in the MaxMind format
//     (records {"country_code": "FR"}), ip-location-db's
//     geo-whois-asn-country — GeoFeed, then the five registries' WHOIS,
//     then their ASN data, merged — under CC BY 4.0 by the NRO
//     (LICENSE.NRO; the npm package says CC0-1.0: the stricter is kept).
//     Package geoip reads it when -geoip names no file.
//   - datacenter-ranges.txt: the address ranges of the hosting and cloud
//     networks that datacenter-asns.txt lists by AS number, made by
//     internal/gen from ip-location-db's asn data (RouteViews, the
//     registries and DB-IP's IP-to-ASN Lite: CC BY 4.0, LICENSE.RouteViews,
//     LICENSE.NRO, LICENSE.DB-IP). Package ivt counts their traffic as
//     invalid (reason datacenter) unless -ivt-datacenters=false.
//
// Attribution, as the licences ask: IP data by the NRO and RouteViews;
// IP Geolocation by DB-IP (https://db-ip.com). docs/ivt.md and the
// console's footer say so.
package ipdata

import _ "embed"

// Country is country.mmdb, embedded whole: it is read in place (no copy
// on the heap; the pages a lookup touches are the binary's own).
//
//go:embed country.mmdb
var Country []byte

// DatacenterRanges is datacenter-ranges.txt: one CIDR prefix a line,
// under a "# AS<n> <operator>" comment for each network.
//
//go:embed datacenter-ranges.txt
var DatacenterRanges []byte

// Versions names the vendored versions, one "name version" a line.
//
//go:embed VERSIONS
var Versions string
