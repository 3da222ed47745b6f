package marquee

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Header bidding's vocabulary (docs/api.md#header-bidding).

// MaxBidderLen is the longest bidder code.
const MaxBidderLen = 64

// IsBidderCode reports whether s is a bidder's code as Prebid names them:
// 1 to MaxBidderLen of A–Z, a–z, 0–9, _ . - (nothing an event line or a
// URL must escape).
func IsBidderCode[T ~string | ~[]byte](s T) bool {
	if len(s) == 0 || len(s) > MaxBidderLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// A Deal is a private-marketplace or programmatic-guaranteed agreement
// with named buyers (docs/api.md#deals): a header-bidding bid naming its
// ID is lifted to Tier only when it comes from one of Bidders, at or
// above Floor (after the bidder's adjustment), within its flight (nil
// ends: open); any other bid naming it competes in the open auction.
// AdvertiserID, when set, names the advertiser the deal is sold to (for
// reports and invoices; 0: none). ClientBids says the deal lifts bids
// the page sends (client-side header bidding): nobody authenticates them,
// so a page can forge one — off by default, such bids then compete in the
// open auction.
type Deal struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Bidders      []string   `json:"bidders"`
	Floor        Micros     `json:"floor"`
	Tier         string     `json:"tier"`
	ClientBids   bool       `json:"clientBids"`
	AdvertiserID int64      `json:"advertiserId,omitempty,string"`
	StartAt      *time.Time `json:"startAt,omitempty"`
	EndAt        *time.Time `json:"endAt,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
}

// MaxDealID bounds a deal id (what a bid's dealId may be), and
// MaxDealBidders a deal's buyers.
const (
	MaxDealID      = 128
	MaxDealBidders = 50
)

// EntityDeal is the changelog's name for a deal (keyed by its id).
const EntityDeal = "deal"

// NoDeal is the error of a deal that does not exist.
func NoDeal(id string) *Error { return Errorf(KindNotFound, "deal %q not found", id) }

// Open reports whether the deal's flight holds now.
func (d *Deal) Open(now time.Time) bool {
	return (d.StartAt == nil || !now.Before(*d.StartAt)) && (d.EndAt == nil || now.Before(*d.EndAt))
}

// ParseDealInput decodes and checks a deal's body: id (1 to MaxDealID
// printable characters; on a replace, the path's), name, bidders (1 to
// MaxDealBidders bidder codes), floor (an amount, default 0), tier
// (sponsorship, standard or remnant), clientBids (default false),
// advertiserId and startAt/endAt (optional). Every problem is named.
func ParseDealInput(body []byte) (Deal, error) {
	var d Deal
	p := Problems{}
	fields, ok := object(body, p, "id", "name", "bidders", "floor", "tier", "clientBids", "advertiserId", "startAt", "endAt")
	if !ok {
		return d, Invalid("invalid deal", p)
	}
	if raw, ok := present(fields, "id"); ok {
		if json.Unmarshal(raw, &d.ID) != nil || !IsDealID(d.ID) {
			p["id"] = fmt.Sprintf("must be 1 to %d printable characters, as bids name it", MaxDealID)
		}
	}
	d.Name = nameField(fields, "name", true, p)
	if raw, ok := present(fields, "bidders"); !ok {
		p["bidders"] = "is required: the bidders whose bids the deal lifts"
	} else if json.Unmarshal(raw, &d.Bidders) != nil || len(d.Bidders) == 0 || len(d.Bidders) > MaxDealBidders {
		p["bidders"] = fmt.Sprintf("must be a list of 1 to %d bidder codes", MaxDealBidders)
	} else {
		for i, b := range d.Bidders {
			if !IsBidderCode(b) {
				p[fmt.Sprintf("bidders[%d]", i)] = fmt.Sprintf("must be a bidder code: 1 to %d of A–Z, a–z, 0–9, _ . -", MaxBidderLen)
			}
		}
		slices.Sort(d.Bidders)
		d.Bidders = slices.Compact(d.Bidders)
	}
	if raw, ok := present(fields, "floor"); ok {
		m, err := ParseAmount(raw)
		if err != nil {
			p["floor"] = err.Error()
		}
		d.Floor = m
	}
	if d.Tier = oneOfField(fields, "tier", []string{PrioritySponsorship, PriorityStandard, PriorityRemnant}, "", p); d.Tier == "" && p["tier"] == "" {
		p["tier"] = "is required: sponsorship, standard or remnant"
	}
	if raw, ok := present(fields, "clientBids"); ok && json.Unmarshal(raw, &d.ClientBids) != nil {
		p["clientBids"] = "must be true or false"
	}
	if raw, ok := present(fields, "advertiserId"); ok {
		if id, good := ParseID(raw); good {
			d.AdvertiserID = id
		} else {
			p["advertiserId"] = "must be an advertiser's id"
		}
	}
	for _, f := range []struct {
		k    string
		into **time.Time
	}{{"startAt", &d.StartAt}, {"endAt", &d.EndAt}} {
		if _, ok := present(fields, f.k); ok {
			if t, good := parseTimeField(fields, f.k, p); good {
				t = t.UTC().Truncate(time.Millisecond)
				*f.into = &t
			}
		}
	}
	if d.StartAt != nil && d.EndAt != nil && !d.EndAt.After(*d.StartAt) {
		p["endAt"] = "must be after startAt"
	}
	return d, Invalid("invalid deal", p)
}

// IsDealID reports whether s is a deal id: 1 to MaxDealID bytes of
// UTF-8 without control characters (what a bid's dealId may be).
func IsDealID(s string) bool {
	return len(s) > 0 && len(s) <= MaxDealID && utf8.ValidString(s) && !strings.ContainsFunc(s, isControl)
}
