package marquee

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Bounds are what an account of an advertiser or a publisher may see: its
// advertisers (their campaigns, ads, creatives and reports), or its sites
// (their placements' requests, fill, revenue and tags). The zero Bounds
// bound nothing: the ad team's own accounts (docs/api.md#accounts).
type Bounds struct {
	Advertisers IDs      `json:"advertisers,omitempty"`
	Sites       []string `json:"sites,omitempty"`
}

// Bound says whether b limits what its account sees.
func (b Bounds) Bound() bool { return len(b.Advertisers)+len(b.Sites) > 0 }

// HasAdvertiser says whether advertiser id is one of b's.
func (b Bounds) HasAdvertiser(id int64) bool { return slices.Contains(b.Advertisers, id) }

// HasSite says whether site is one of b's.
func (b Bounds) HasSite(site string) bool { return slices.Contains(b.Sites, site) }

// Fields names b's fields that bound (for the audit log's fields).
func (b Bounds) Fields() []string {
	var out []string
	if len(b.Advertisers) > 0 {
		out = append(out, "advertisers")
	}
	if len(b.Sites) > 0 {
		out = append(out, "sites")
	}
	return out
}

// String is b as stores keep it: "" unbound, else its JSON.
func (b Bounds) String() string {
	if !b.Bound() {
		return ""
	}
	j, _ := json.Marshal(b)
	return string(j)
}

// BoundsOf parses bounds as String writes them ("" or bad: none — a
// stored value is Marquee's own).
func BoundsOf(stored string) Bounds {
	var b Bounds
	if stored != "" {
		json.Unmarshal([]byte(stored), &b)
	}
	return b
}

// IDs are ids given as JSON strings or numbers, written as strings (as
// every id of the API).
type IDs []int64

// MarshalJSON writes the ids as strings.
func (ids IDs) MarshalJSON() ([]byte, error) {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads ids given as strings or numbers.
func (ids *IDs) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*ids = (*ids)[:0]
	for _, r := range raw {
		id, err := strconv.ParseInt(strings.Trim(string(r), `"`), 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("not an id: %s", r)
		}
		*ids = append(*ids, id)
	}
	return nil
}

// MaxBounds bounds the advertisers or sites of one account.
const MaxBounds = 100

// parseBounds reads the "advertisers" and "sites" fields of a body into
// b (nil when neither is present), noting what is wrong in p.
func parseBounds(fields map[string]json.RawMessage, p Problems) *Bounds {
	ra, hasA := present(fields, "advertisers")
	rs, hasS := present(fields, "sites")
	if !hasA && !hasS {
		return nil
	}
	b := &Bounds{}
	if hasA && string(ra) != "null" {
		if err := json.Unmarshal(ra, &b.Advertisers); err != nil {
			p["advertisers"] = "must be an array of advertiser ids"
		}
	}
	if hasS && string(rs) != "null" {
		if err := json.Unmarshal(rs, &b.Sites); err != nil {
			p["sites"] = "must be an array of site names"
		}
		for i, s := range b.Sites {
			if s = strings.TrimSpace(s); s == "" || len(s) > 64 || strings.ContainsRune(s, 0) {
				p["sites"] = fmt.Sprintf("sites[%d] must be 1 to 64 bytes", i)
			}
			b.Sites[i] = strings.TrimSpace(s)
		}
	}
	if len(b.Advertisers) > MaxBounds || len(b.Sites) > MaxBounds {
		p["advertisers"] = fmt.Sprintf("at most %d advertisers or sites", MaxBounds)
	}
	b.Sites = slices.Compact(slices.Sorted(slices.Values(b.Sites)))
	b.Advertisers = slices.Compact(slices.Sorted(slices.Values(b.Advertisers)))
	return b
}

// CheckRoleBounds says what is wrong with a user of role bound by b: an
// advertiser user is bound to one or more advertisers and no site, a
// publisher user to one or more sites and no advertiser, the others to
// nothing.
func CheckRoleBounds(role string, b Bounds) Problems {
	p := Problems{}
	switch role {
	case RoleAdvertiser:
		if len(b.Advertisers) == 0 {
			p["advertisers"] = "an advertiser user needs one or more advertisers"
		}
		if len(b.Sites) > 0 {
			p["sites"] = "an advertiser user has no sites"
		}
	case RolePublisher:
		if len(b.Sites) == 0 {
			p["sites"] = "a publisher user needs one or more sites"
		}
		if len(b.Advertisers) > 0 {
			p["advertisers"] = "a publisher user has no advertisers"
		}
	default:
		if b.Bound() {
			p["role"] = "only advertiser and publisher users are bound to advertisers or sites"
		}
	}
	return p
}

// BoundKeyScopes are the scopes a key bound by b may hold: BoundScopes,
// and, bound to advertisers, conversions:write (a postback of theirs),
// campaigns:submit (their campaigns, for approval), ads:write (their
// ads, which wait for approval) and billing:write (top-ups of their
// prepaid balances, by card).
func BoundKeyScopes(b Bounds) ScopeSet {
	if len(b.Advertisers) > 0 {
		s, _, _ := ParseScopes([]string{string(ScopeConversionsWrite), string(ScopeCampaignsSubmit), string(ScopeAdsWrite), string(ScopeBillingWrite)})
		return BoundScopes | s
	}
	return BoundScopes
}
