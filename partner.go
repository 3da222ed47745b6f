package marquee

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Server-side demand's vocabulary (docs/demand.md): a demand partner is
// an outside buyer Marquee sends OpenRTB 2.6 bid requests to within its
// decisions.

// A DemandPartner is an OpenRTB buyer (docs/demand.md#partners): its
// Name (a bidder code; what reports, privacy rules and events call it),
// the Endpoint its bid requests are POSTed to, the Formats it buys, how
// long it may take (TimeoutMS, within the decision's tmax), its request
// rate per instance (QPS, 0: no limit), the factor its bids are
// multiplied by before they compete (BidAdjustment), the placements it
// may fill (by name; none: every placement of its formats), the headers
// its requests carry (its credentials: never answered, never audited),
// whether requests are gzipped and whether they are marked test.
type DemandPartner struct {
	Name          string            `json:"name"`
	Endpoint      string            `json:"endpoint"`
	Formats       []string          `json:"formats"`
	TimeoutMS     int               `json:"timeoutMs"`
	QPS           int               `json:"qps"`
	BidAdjustment float64           `json:"bidAdjustment"`
	Placements    []string          `json:"placements,omitempty"`
	Headers       map[string]string `json:"-"`
	// HeaderNames are Headers' names, what answers show of them.
	HeaderNames []string  `json:"headers,omitempty"`
	Gzip        bool      `json:"gzip"`
	Test        bool      `json:"test"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// The formats a demand partner buys, as OpenRTB's imp objects name them.
const (
	FormatBanner = "banner"
	FormatVideo  = "video"
	FormatAudio  = "audio"
	FormatNative = "native"
)

// DemandFormats are the formats a partner may buy.
var DemandFormats = []string{FormatBanner, FormatVideo, FormatAudio, FormatNative}

// EntityDemandPartner is the changelog's name for a demand partner
// (keyed by its name).
const EntityDemandPartner = "demandPartner"

// Bounds of a demand partner's terms.
const (
	DefaultPartnerTimeoutMS = 200
	MaxPartnerTimeoutMS     = 2000
	MaxPartnerQPS           = 100_000
	MaxPartnerPlacements    = 500
	MaxPartnerHeaders       = 10
	MaxPartnerHeaderLen     = 4096
	MaxPartnerEndpointLen   = 2048
)

// MarqueeComponent is the name that is Marquee's own (its privacy
// rules' component, and the seat of its Prebid Server answers): no
// partner may take it.
const MarqueeComponent = "marquee"

// PartnerPrefix marks a demand partner's name where header bidding's
// bidders are counted (events, bids' counts, reports by bidder): "@dsp"
// is partner dsp's — no page's bid can take it, as no bidder code holds
// an "@". A partner's name is at most MaxBidderLen-1 bytes so that it
// fits.
const PartnerPrefix = "@"

// PartnerBidder is partner name's bidder, as bids' counts name it.
func PartnerBidder(name string) string { return PartnerPrefix + name }

// PartnerOf is the partner of bidder, and whether it is one's.
func PartnerOf[T ~string | ~[]byte](bidder T) (string, bool) {
	if len(bidder) < 2 || bidder[0] != PartnerPrefix[0] || !IsBidderCode(bidder[1:]) {
		return "", false
	}
	return string(bidder[1:]), true
}

// NoDemandPartner is the error of a partner that does not exist.
func NoDemandPartner(name string) *Error {
	return Errorf(KindNotFound, "demand partner %q not found", name)
}

// Buys reports whether the partner buys format f for placement pl.
func (p *DemandPartner) Buys(f, pl string) bool {
	return slices.Contains(p.Formats, f) && (len(p.Placements) == 0 || slices.Contains(p.Placements, pl))
}

// ParseDemandPartnerInput decodes and checks a demand partner's body:
// name (a bidder code, not "marquee"; on a replace, the path's), endpoint
// (an http or https URL), formats (1 to 4 of DemandFormats), timeoutMs
// (1 to MaxPartnerTimeoutMS, default DefaultPartnerTimeoutMS), qps (0 to
// MaxPartnerQPS), bidAdjustment (above 0, at most 10, default 1),
// placements (names), headers ({name: value}: absent, the stored ones are
// kept on a replace — hasHeaders says whether it was given), gzip, test.
// Every problem is named.
func ParseDemandPartnerInput(body []byte) (p DemandPartner, hasHeaders bool, err error) {
	probs := Problems{}
	fields, ok := object(body, probs, "name", "endpoint", "formats", "timeoutMs", "qps", "bidAdjustment", "placements", "headers", "gzip", "test")
	if !ok {
		return p, false, Invalid("invalid demand partner", probs)
	}
	if raw, ok := present(fields, "name"); ok {
		if json.Unmarshal(raw, &p.Name) != nil || !IsBidderCode(p.Name) || len(p.Name) >= MaxBidderLen {
			probs["name"] = fmt.Sprintf("must be 1 to %d of A–Z, a–z, 0–9, _ . - (reports, privacy rules and events name the partner by it)", MaxBidderLen-1)
		} else if strings.EqualFold(p.Name, MarqueeComponent) {
			probs["name"] = fmt.Sprintf("%q is Marquee's own component", MarqueeComponent)
		}
	}
	if raw, ok := present(fields, "endpoint"); !ok {
		probs["endpoint"] = "is required: the URL bid requests are POSTed to"
	} else if json.Unmarshal(raw, &p.Endpoint) != nil {
		probs["endpoint"] = "must be a string"
	} else if msg := CheckURL(p.Endpoint); msg != "" || len(p.Endpoint) > MaxPartnerEndpointLen {
		probs["endpoint"] = fmt.Sprintf("must be an http or https URL of at most %d bytes", MaxPartnerEndpointLen)
	}
	if raw, ok := present(fields, "formats"); !ok {
		probs["formats"] = "is required: some of " + strings.Join(DemandFormats, ", ")
	} else if json.Unmarshal(raw, &p.Formats) != nil || len(p.Formats) == 0 {
		probs["formats"] = "must be a list of some of " + strings.Join(DemandFormats, ", ")
	} else {
		for i, f := range p.Formats {
			if !slices.Contains(DemandFormats, f) {
				probs[fmt.Sprintf("formats[%d]", i)] = "must be one of " + strings.Join(DemandFormats, ", ")
			}
		}
		slices.Sort(p.Formats)
		p.Formats = slices.Compact(p.Formats)
	}
	p.TimeoutMS, p.BidAdjustment = DefaultPartnerTimeoutMS, 1
	intField := func(k string, into *int, lo, hi int) {
		if raw, ok := present(fields, k); ok {
			if json.Unmarshal(raw, into) != nil || *into < lo || *into > hi {
				probs[k] = fmt.Sprintf("must be an integer from %d to %d", lo, hi)
			}
		}
	}
	intField("timeoutMs", &p.TimeoutMS, 1, MaxPartnerTimeoutMS)
	intField("qps", &p.QPS, 0, MaxPartnerQPS)
	if raw, ok := present(fields, "bidAdjustment"); ok {
		if json.Unmarshal(raw, &p.BidAdjustment) != nil || !(p.BidAdjustment > 0 && p.BidAdjustment <= 10) {
			probs["bidAdjustment"] = "must be a number above 0 and at most 10"
		}
	}
	if raw, ok := present(fields, "placements"); ok {
		if json.Unmarshal(raw, &p.Placements) != nil || len(p.Placements) > MaxPartnerPlacements {
			probs["placements"] = fmt.Sprintf("must be a list of at most %d placement names", MaxPartnerPlacements)
		} else {
			slices.Sort(p.Placements)
			p.Placements = slices.Compact(p.Placements)
		}
	}
	if raw, ok := present(fields, "headers"); ok {
		hasHeaders = true
		if json.Unmarshal(raw, &p.Headers) != nil || len(p.Headers) > MaxPartnerHeaders {
			probs["headers"] = fmt.Sprintf("must be an object of at most %d header names and their values", MaxPartnerHeaders)
		}
		for k, v := range p.Headers {
			if !validHeaderName(k) || len(v) > MaxPartnerHeaderLen || strings.ContainsFunc(v, isControl) {
				probs["headers."+k] = fmt.Sprintf("must be a header's name (a token) and a value of at most %d bytes without control characters", MaxPartnerHeaderLen)
			}
			if reservedHeader(k) {
				probs["headers."+k] = "is set by Marquee"
			}
		}
		p.HeaderNames = slices.Sorted(maps.Keys(p.Headers))
	}
	for _, k := range []string{"gzip", "test"} {
		if raw, ok := present(fields, k); ok {
			into := &p.Gzip
			if k == "test" {
				into = &p.Test
			}
			if json.Unmarshal(raw, into) != nil {
				probs[k] = "must be true or false"
			}
		}
	}
	return p, hasHeaders, Invalid("invalid demand partner", probs)
}

// validHeaderName reports whether k is an HTTP header's name: an RFC 9110
// token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// reservedHeader reports whether k is a header Marquee sets on a bid
// request itself.
func reservedHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Content-Type", "Content-Encoding", "Content-Length", "Accept-Encoding", "Host", "X-Openrtb-Version", "Connection", "Transfer-Encoding":
		return true
	}
	return false
}
