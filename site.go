package marquee

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// A Site is a publisher's property (docs/api.md#sites): its placements
// name it (PlacementInput.Site), its Domains are where its pages are, and
// RevenueShare is the part of what its placements' ads earn (their
// advertisers' billed spend) that is the publisher's — what a publisher's
// account sees as its revenue and what its statements pay. A site's
// publisher is the logins and keys bound to it (Bounds.Sites).
//
// SellerID is the site's seller_id in the network's sellers.json and its
// ads.txt line (docs/api.md#sellers-and-adstxt): assigned when the site
// is made, never changed and never given to another site, even after it
// is deleted. SellerType and Confidential are its sellers.json entry's.
type Site struct {
	Name         string     `json:"name"`
	Domains      []string   `json:"domains"`
	RevenueShare float64    `json:"revenueShare"`
	SellerID     string     `json:"sellerId"`
	SellerType   SellerType `json:"sellerType"`
	Confidential bool       `json:"confidential"`
	// AdsTxt is the last check of its domains' ads.txt (nil: never
	// checked): whether they authorise the network to sell the site.
	AdsTxt *AdsTxtCheck `json:"adsTxt,omitempty"`
	// Quarantined: the site serves and bills nothing (docs/ivt.md#quarantine):
	// its decisions are invalid traffic of reason quarantined, earning
	// its publisher nothing. Set by the team, audited.
	Quarantined bool `json:"quarantined"`
	// ChildDirected: the site is directed to children (COPPA): its
	// placements' decisions have no user, no personalisation and send
	// nothing of the user (docs/privacy.md#activities).
	ChildDirected bool `json:"childDirected"`
	// QualityAlarm is the last hour whose invalid traffic passed the
	// network's alarm (-ivt-site-alarm; nil: none has).
	QualityAlarm *QualityAlarm `json:"qualityAlarm,omitempty"`
	CreatedAt    time.Time     `json:"createdAt"`
	UpdatedAt    time.Time     `json:"updatedAt"`
}

// SiteQuality is a site's traffic over [From, To) (docs/api.md#site-quality):
// the slots its placements' decisions asked for — people's (Requests)
// and invalid traffic's (InvalidRequests, and by reason in Invalid) —
// and the invalid share of them all.
type SiteQuality struct {
	From            time.Time        `json:"from"`
	To              time.Time        `json:"to"`
	Requests        int64            `json:"requests"`
	InvalidRequests int64            `json:"invalidRequests"`
	Invalid         map[string]int64 `json:"invalid"`
	InvalidRate     float64          `json:"invalidRate"`
}

// QualityAlarm is an hour of a site's traffic whose invalid rate passed
// Threshold (-ivt-site-alarm) with at least MinRequests slots asked for
// in all (people's and invalid).
type QualityAlarm struct {
	SiteQuality
	Threshold   float64 `json:"threshold"`
	MinRequests int64   `json:"minRequests"`
}

// SellerType is what a site's seller is to the network, as sellers.json
// 1.0 names it: the publisher of the site (PUBLISHER), an intermediary
// that resells others' inventory through it (INTERMEDIARY), or both.
type SellerType string

// The seller types; SellerTypes lists them.
const (
	SellerPublisher    SellerType = "PUBLISHER"
	SellerIntermediary SellerType = "INTERMEDIARY"
	SellerBoth         SellerType = "BOTH"
)

// AdsTxtStatus is what a check of a site's ads.txt found
// (docs/api.md#sellers-and-adstxt).
type AdsTxtStatus string

// The statuses of an ads.txt check, of a domain and of a site (a site's
// is its best domain's, in this order).
const (
	AdsTxtAuthorized AdsTxtStatus = "authorized" // a record names the network's domain and the site's seller id
	AdsTxtNotListed  AdsTxtStatus = "notListed"  // the file was read and names no such record
	AdsTxtMissing    AdsTxtStatus = "missing"    // there is no file (404, 410), or the site has no domain
	AdsTxtError      AdsTxtStatus = "error"      // the file could not be read (a timeout, a 5xx, not text/plain, too large, a redirect too far)
)

// AdsTxtCheck is a check of a site's domains' ads.txt: the site's status,
// when it was checked, and each domain's.
type AdsTxtCheck struct {
	Status    AdsTxtStatus   `json:"status"`
	CheckedAt time.Time      `json:"checkedAt"`
	Domains   []AdsTxtDomain `json:"domains"`
}

// AdsTxtDomain is one domain's check: its status, the record that
// authorises the network (Line, as written), or why it could not be
// read (Error).
type AdsTxtDomain struct {
	Domain string       `json:"domain"`
	Status AdsTxtStatus `json:"status"`
	Line   string       `json:"line,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// Authorized reports whether the check found the network authorised on
// one of the site's domains.
func (c *AdsTxtCheck) Authorized() bool { return c != nil && c.Status == AdsTxtAuthorized }

// SellerTypes are the seller types, the default first.
var SellerTypes = []SellerType{SellerPublisher, SellerIntermediary, SellerBoth}

// MaxSiteDomains bounds a site's domains.
const MaxSiteDomains = 50

// NoSite is the error of a site that does not exist.
func NoSite(name string) *Error { return Errorf(KindNotFound, "site %q not found", name) }

// ParseSiteInput decodes and checks a site's body: name (required, as
// placements name it), domains (0 to MaxSiteDomains hostnames) and
// revenueShare (required, from 0 to 1: 0.7 is 70% of the gross to the
// publisher), sellerType (one of SellerTypes; PUBLISHER when absent) and
// confidential (false when absent). A site's sellerId is Marquee's to
// give. quarantined (false when absent: a PUT replaces the site whole)
// stops it billing. Every problem is named.
func ParseSiteInput(body []byte) (Site, error) {
	var s Site
	p := Problems{}
	fields, ok := object(body, p, "name", "domains", "revenueShare", "sellerType", "confidential", "quarantined", "childDirected")
	if !ok {
		return s, Invalid("invalid site", p)
	}
	s.Name = nameField(fields, "name", true, p)
	s.Domains = []string{}
	if raw, ok := present(fields, "domains"); ok {
		var ds []string
		if json.Unmarshal(raw, &ds) != nil || len(ds) > MaxSiteDomains {
			p["domains"] = fmt.Sprintf("must be a list of at most %d hostnames", MaxSiteDomains)
		}
		for i, d := range ds {
			n, msg := NormDomain(d)
			if msg != "" {
				p["domains["+strconv.Itoa(i)+"]"] = msg
			}
			s.Domains = append(s.Domains, n)
		}
	}
	if raw, ok := present(fields, "revenueShare"); !ok {
		p["revenueShare"] = "is required: the publisher's part of what its placements earn, from 0 to 1 (0.7: 70%)"
	} else if json.Unmarshal(raw, &s.RevenueShare) != nil || s.RevenueShare < 0 || s.RevenueShare > 1 {
		p["revenueShare"] = "must be a number from 0 to 1 (0.7: 70% of what its placements earn)"
	}
	s.SellerType = SellerPublisher
	if raw, ok := present(fields, "sellerType"); ok {
		if json.Unmarshal(raw, &s.SellerType) != nil || !slices.Contains(SellerTypes, s.SellerType) {
			p["sellerType"] = "must be PUBLISHER, INTERMEDIARY or BOTH (as sellers.json names them)"
		}
	}
	if raw, ok := present(fields, "confidential"); ok && json.Unmarshal(raw, &s.Confidential) != nil {
		p["confidential"] = "must be true or false"
	}
	if raw, ok := present(fields, "quarantined"); ok && json.Unmarshal(raw, &s.Quarantined) != nil {
		p["quarantined"] = "must be true or false"
	}
	if raw, ok := present(fields, "childDirected"); ok && json.Unmarshal(raw, &s.ChildDirected) != nil {
		p["childDirected"] = "must be true or false"
	}
	return s, Invalid("invalid site", p)
}

// SitePlacements are the ids of the placements of each site that
// placements name (a placement without a site is no site's).
func SitePlacements(placements []Placement) map[string][]int64 {
	by := map[string][]int64{}
	for _, pl := range placements {
		if pl.Site != "" {
			by[pl.Site] = append(by[pl.Site], pl.ID)
		}
	}
	return by
}
