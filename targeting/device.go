package targeting

import (
	"strings"
	"sync"

	"github.com/medama-io/go-useragent"
	"github.com/medama-io/go-useragent/agents"
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
func Device(ua string) (device, browser, os string) {
	a := uaParser().Parse(ua)
	switch a.Device() {
	case agents.DeviceDesktop:
		device = "desktop"
	case agents.DeviceMobile:
		device = "phone"
		switch {
		case strings.Contains(ua, "SmartTV") || strings.Contains(ua, "SMART-TV"):
			device = "tv"
		case a.OS() == agents.OSAndroid && !strings.Contains(ua, "Mobile"):
			device = "tablet"
		}
	case agents.DeviceTablet:
		device = "tablet"
	case agents.DeviceTV:
		device = "tv"
	case agents.DeviceBot:
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
