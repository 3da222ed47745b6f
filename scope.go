package marquee

import (
	"slices"
	"strings"
)

// Scopes and roles: what a credential may do (docs/api.md#access).

// Scope is a right a credential may hold: to read or write ads, links or
// campaigns, to read reports, or to manage users and keys (and read the
// audit log).
type Scope string

// The scopes.
const (
	ScopeAdsRead    Scope = "ads:read"
	ScopeAdsWrite   Scope = "ads:write"
	ScopeLinksRead  Scope = "links:read"
	ScopeLinksWrite Scope = "links:write"
	// campaigns:read and campaigns:write cover advertisers, campaigns,
	// placements and creative assets.
	ScopeCampaignsRead  Scope = "campaigns:read"
	ScopeCampaignsWrite Scope = "campaigns:write"
	// campaigns:submit submits a campaign for approval (an advertiser's
	// account, its own); campaigns:approve approves or rejects one
	// (docs/api.md#approval).
	ScopeCampaignsSubmit  Scope = "campaigns:submit"
	ScopeCampaignsApprove Scope = "campaigns:approve"
	ScopeReportsRead      Scope = "reports:read"
	ScopeKeysAdmin        Scope = "keys:admin"
	// webhooks:admin manages webhooks, which send events out.
	ScopeWebhooksAdmin Scope = "webhooks:admin"
	// privacy:admin answers data subjects' requests (erasure).
	ScopePrivacyAdmin Scope = "privacy:admin"
	// conversions:write posts an advertiser's conversions (a server's
	// postback).
	ScopeConversionsWrite Scope = "conversions:write"
	// billing:write pays into a prepaid advertiser's balance (an
	// advertiser's account: its own, by card) and gives credits (the
	// team).
	ScopeBillingWrite Scope = "billing:write"
)

// Scopes lists every scope, in the order lists of scopes are given in.
var Scopes = scopeBits[:]

// ScopeSet is a set of scopes, one bit each (in the order of Scopes).
type ScopeSet uint16

// AllScopes holds every scope.
const AllScopes = ScopeSet(1)<<len(scopeBits) - 1

var scopeBits = [...]Scope{ScopeAdsRead, ScopeAdsWrite, ScopeLinksRead, ScopeLinksWrite, ScopeCampaignsRead, ScopeCampaignsWrite,
	ScopeReportsRead, ScopeKeysAdmin, ScopeWebhooksAdmin, ScopePrivacyAdmin, ScopeConversionsWrite, ScopeCampaignsSubmit, ScopeCampaignsApprove, ScopeBillingWrite}

// Has reports whether s holds scope.
func (s ScopeSet) Has(scope Scope) bool {
	i := slices.Index(scopeBits[:], scope)
	return i >= 0 && s&(1<<i) != 0
}

// Contains reports whether s holds every scope of o.
func (s ScopeSet) Contains(o ScopeSet) bool { return s&o == o }

// List returns the scopes of s in the order of Scopes.
func (s ScopeSet) List() []Scope {
	out := []Scope{}
	for i, sc := range scopeBits {
		if s&(1<<i) != 0 {
			out = append(out, sc)
		}
	}
	return out
}

// String is the scopes of s separated by spaces (how stores keep them).
func (s ScopeSet) String() string {
	var b strings.Builder
	for i, sc := range s.List() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(sc))
	}
	return b.String()
}

// ParseScopes returns the set of the named scopes; ok is false when a
// name is not a scope.
func ParseScopes(names []string) (s ScopeSet, bad string, ok bool) {
	for _, n := range names {
		i := slices.Index(scopeBits[:], Scope(n))
		if i < 0 {
			return 0, n, false
		}
		s |= 1 << i
	}
	return s, "", true
}

// ScopesOf parses a set as String writes it; unknown names are ignored
// (a scope removed in a later version grants nothing).
func ScopesOf(stored string) ScopeSet {
	var s ScopeSet
	for n := range strings.FieldsSeq(stored) {
		if i := slices.Index(scopeBits[:], Scope(n)); i >= 0 {
			s |= 1 << i
		}
	}
	return s
}

// The roles of users: named scope sets.
const (
	RoleOwner  = "owner"  // everything; the last owner cannot be removed or demoted
	RoleAdmin  = "admin"  // everything, but cannot remove, demote or make owners
	RoleEditor = "editor" // ads, links, campaigns and reports, read and write; submits campaigns, never approves
	RoleViewer = "viewer" // every read scope
)

// The roles of accounts outside the ad team, bound to advertisers or
// sites (bounds.go).
const (
	RoleAdvertiser = "advertiser" // reads its advertisers' campaigns, ads and reports; drafts and submits their campaigns, writes their ads (which wait for approval), keeps their conversion secret and postback keys, pays into their prepaid balances
	RolePublisher  = "publisher"  // reads its sites' placements and their reports
)

// BoundScopes are the scopes every bound credential may hold: reads only
// (BoundKeyScopes adds an advertiser's).
var BoundScopes = func() ScopeSet {
	s, _, _ := ParseScopes([]string{string(ScopeAdsRead), string(ScopeCampaignsRead), string(ScopeReportsRead)})
	return s
}()

// Roles lists the roles, most powerful first.
var Roles = []string{RoleOwner, RoleAdmin, RoleEditor, RoleViewer, RoleAdvertiser, RolePublisher}

// RoleScopes returns the scopes of role, and whether it is a role.
func RoleScopes(role string) (ScopeSet, bool) {
	read, _, _ := ParseScopes([]string{"ads:read", "links:read", "campaigns:read", "reports:read"})
	switch role {
	case RoleOwner, RoleAdmin:
		return AllScopes, true
	case RoleEditor:
		w, _, _ := ParseScopes([]string{"ads:write", "links:write", "campaigns:write", "campaigns:submit"})
		return read | w, true
	case RoleViewer:
		return read, true
	case RoleAdvertiser:
		s, _, _ := ParseScopes([]string{string(ScopeCampaignsSubmit), string(ScopeAdsWrite), string(ScopeConversionsWrite), string(ScopeBillingWrite)})
		return BoundScopes | s, true
	case RolePublisher:
		s, _, _ := ParseScopes([]string{"campaigns:read", "reports:read"})
		return s, true
	}
	return 0, false
}
