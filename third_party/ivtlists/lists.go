// Package ivtlists holds the lists of invalid traffic that Marquee
// vendors from maintained public projects, as their projects publish
// them (scripts/update-ivt-lists.sh updates them; VERSIONS names the
// versions): crawler-user-agents.json (MIT, LICENSE.crawler-user-agents:
// patterns of declared crawlers with example User-Agents, matched case
// sensitively) and isbot.json (Unlicense, LICENSE.isbot: patterns of
// bots, HTTP libraries and tools, matched case insensitively, some with
// look-around). Package ivt compiles them.
package ivtlists

import _ "embed"

// CrawlerUserAgents is crawler-user-agents.json: a JSON array of
// {"pattern", "instances": [example User-Agents], …}.
//
//go:embed crawler-user-agents.json
var CrawlerUserAgents []byte

// IsBot is isbot's pattern list: a JSON array of regular expressions.
//
//go:embed isbot.json
var IsBot []byte

// Versions names the vendored versions, one "name version" a line.
//
//go:embed VERSIONS
var Versions string
