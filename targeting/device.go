package targeting

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/maypok86/otter/v2"
	"github.com/medama-io/go-useragent"
	uagents "github.com/medama-io/go-useragent/agents"
)

// uaParser is the User-Agent parser, built at first use (its trie takes
// a few milliseconds to build and is safe for concurrent use).
var uaParser = sync.OnceValue(useragent.NewParser)

// Device reads a User-Agent with a maintained parser
// (github.com/medama-io/go-useragent): the device type (one of
// marquee.DeviceTypes, "" when unknown), browser and OS, lower case ("" when
// unknown).
//
// Two conventions the parser misses are applied over its answer (checked
// against testdata/useragents.txt): an Android device it calls mobile is
// a tablet when its User-Agent lacks the "Mobile" token (how Chrome and
// the Android WebView tell a tablet, as Google documents), and a TV when
// the User-Agent says "SmartTV" or "SMART-TV" (Android TVs, Tizen).
//
// Answers are kept for the most seen User-Agents (agents), so that the
// few that make most traffic are parsed once.
func Device(ua string) (device, browser, os string) {
	if d, ok := agents.GetIfPresent(ua); ok {
		return d.device, d.browser, d.os
	}
	device, browser, os = parseDevice(ua)
	if len(ua) <= maxAgentLen {
		agents.Set(ua, agent{device, browser, os})
	}
	return device, browser, os
}

// DeviceType is Device's device type of a User-Agent given as bytes,
// without allocating when the User-Agent was seen before (a decision's
// request count reads it).
func DeviceType(ua []byte) string {
	if len(ua) == 0 {
		return ""
	}
	if d, ok := agents.GetIfPresent(unsafe.String(unsafe.SliceData(ua), len(ua))); ok { // a look-up keeps no key
		return d.device
	}
	device, _, _ := Device(string(ua))
	return device
}

// agent is what Device answers of a User-Agent.
type agent struct{ device, browser, os string }

// agents keeps Device's answers for the most seen User-Agents (W-TinyLFU:
// a flood of one-off User-Agents does not push out the common ones).
var agents = otter.Must(&otter.Options[string, agent]{MaximumSize: 10_000})

// maxAgentLen bounds the User-Agents kept (a real one is a few hundred
// bytes).
const maxAgentLen = 512

// parseDevice is Device without the cache.
func parseDevice(ua string) (device, browser, os string) {
	a := uaParser().Parse(ua)
	switch a.Device() {
	case uagents.DeviceDesktop:
		device = "desktop"
	case uagents.DeviceMobile:
		device = "phone"
		switch {
		case strings.Contains(ua, "SmartTV") || strings.Contains(ua, "SMART-TV"):
			device = "tv"
		case a.OS() == uagents.OSAndroid && !strings.Contains(ua, "Mobile"):
			device = "tablet"
		}
	case uagents.DeviceTablet:
		device = "tablet"
	case uagents.DeviceTV:
		device = "tv"
	case uagents.DeviceBot:
		device = "bot"
	}
	return device, lower(string(a.Browser())), lower(string(a.OS()))
}

// lowered keeps the lower-case spelling of the parser's browser and OS
// names (a few dozen), so that a decision does not allocate them again.
var lowered sync.Map

func lower(name string) string {
	if v, ok := lowered.Load(name); ok {
		return v.(string)
	}
	l := strings.ToLower(name)
	lowered.Store(name, l)
	return l
}

// PrimaryLanguage is the primary subtag of the first language of a
// language tag or an Accept-Language header ("en" of "en-US,de;q=0.8"),
// lower case; "" when there is none.
func PrimaryLanguage(s string) string {
	s, _, _ = strings.Cut(s, ",")
	s, _, _ = strings.Cut(s, ";")
	s, _, _ = strings.Cut(strings.TrimSpace(s), "-")
	s = strings.ToLower(s)
	if len(s) < 2 || len(s) > 3 || strings.ContainsFunc(s, func(r rune) bool { return r < 'a' || r > 'z' }) {
		return ""
	}
	return s
}
