// Package ivt tells invalid traffic from people's: general invalid
// traffic (GIVT) by what a request says of itself — declared crawlers
// from maintained lists (third_party/ivtlists), link previewers and mail
// image proxies, prefetches, headless browsers, non-browser agents — and
// by where it comes from (data-centre address ranges from operators'
// files); and the basic sophisticated invalid traffic (SIVT) by
// behaviour — velocity per user and per address, clicks too fast after
// their impression, clicks without a counted impression, repeated
// clicks, conversions too fast after their click.
//
// A Reason names why traffic is invalid (Human: it is not). Package
// serve asks a Filter for a request's reason once and carries it in the
// decision's signed token, so that nothing a decision for invalid
// traffic leads to is billed or delivered; event lines carry it in their
// "ivt" field, and reports count each reason apart (docs/ivt.md).
package ivt

import "time"

// Reason is why traffic is invalid; Human (0) when it is not. Its
// numbers are stored (the reports' bot column): never renumber one.
type Reason uint8

// The reasons. Crawler is 1: reports written before reasons existed
// stored 1 for a bot.
const (
	Human          Reason = iota
	Crawler               // a declared crawler or bot (maintained lists)
	Preview               // a link previewer or mail image proxy
	Prefetch              // a prefetch or prerender (Sec-Purpose, Purpose)
	Headless              // a headless or automated browser
	NonBrowser            // an HTTP library or tool, or no User-Agent
	Datacenter            // an address in a data-centre range (-ivt-ip-ranges)
	Velocity              // the user or address past its events a minute
	FastClick             // a click sooner than the minimum delay after its impression
	NoImpression          // a click whose impression was not counted
	RepeatClick           // a decision's click again
	FastConversion        // a conversion sooner than humanly possible after its click
	Burst                 // billed, then credited after the fact: its user or address went past its events a minute, or its address's click rate past a person's
	ClickLimit            // a click past its campaign's clicks an hour from one address (an IPv6 /64)
	ClickRate             // a click of an address (an IPv6 /64) whose clicks an hour are more of its impressions than people's are
	NoRenderProof         // a billable hit of a placement that asks for a render proof, without a valid one
	DomainMismatch        // a decision whose page is on none of its placement's site's domains
	Unauthorized          // a decision for a site whose ads.txt does not authorise the network (-ads-txt-enforce)
	Quarantined           // a decision for a site the team quarantined
	NumReasons     = iota
)

// names are the reasons' names in event lines, reports and the API.
var names = [NumReasons]string{"", "crawler", "preview", "prefetch", "headless", "nonBrowser", "datacenter",
	"velocity", "fastClick", "noImpression", "repeatClick", "fastConversion", "burst", "clickLimit", "clickRate", "noRenderProof",
	"domainMismatch", "unauthorized", "quarantined"}

// Names are the names of the invalid reasons, by Reason (Names[0] is
// Human's: "human").
var Names = func() [NumReasons]string {
	n := names
	n[Human] = "human"
	return n
}()

// String is the reason's name ("human" for Human).
func (r Reason) String() string {
	if r < NumReasons {
		return Names[r]
	}
	return "unknown"
}

// Name is the reason's name in an event line ("" for Human).
func (r Reason) Name() string {
	if r < NumReasons {
		return names[r]
	}
	return names[Crawler]
}

// Parse reads a reason's name (an event line's "ivt" field): "" is
// Human; a name it does not know is Crawler (invalid, of a kind a later
// release may name).
func Parse[S string | []byte](name S) Reason {
	if len(name) == 0 {
		return Human
	}
	for r := Crawler; r < NumReasons; r++ {
		if string(name) == names[r] {
			return r
		}
	}
	return Crawler
}

// Defaults of a Filter's thresholds (the -ivt-* flags).
const (
	DefaultMinClickDelay      = 500 * time.Millisecond
	DefaultMinConversionDelay = 2 * time.Second
	DefaultUserEvents         = 120  // a user's events a minute
	DefaultAddressEvents      = 6000 // an address's events a minute (many people share one behind NAT)
	DefaultIPv6Prefix         = 64   // the bits of an IPv6 address that name one client (a /64 is a subscriber's, as RFC 6177 assigns)
	DefaultCampaignClicks     = 20   // a campaign's clicks an hour from one address
	DefaultClickRateMin       = 10   // an address's clicks an hour before its click rate is judged
	DefaultMaxClickRate       = 0.3  // the share of its impressions an address's clicks may be (people's CTR is about 0.001 to 0.05)
)
