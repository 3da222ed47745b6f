package marquee

import (
	"context"
	"fmt"
	"time"
)

// AdState selects ads by where now falls in their window.
type AdState string

// The states an admin can list.
const (
	AdsAll       AdState = "all"
	AdsActive    AdState = "active"    // startAt < now < endAt
	AdsScheduled AdState = "scheduled" // now ≤ startAt
	AdsExpired   AdState = "expired"   // endAt ≤ now
)

// ParseAdState returns the state named s ("" means all).
func ParseAdState(s string) (AdState, error) {
	switch st := AdState(s); st {
	case "":
		return AdsAll, nil
	case AdsAll, AdsActive, AdsScheduled, AdsExpired:
		return st, nil
	}
	return "", fmt.Errorf("must be one of all, active, scheduled, expired; got %q", s)
}

// AdFilter selects a page of ads for the admin list, ordered by id.
type AdFilter struct {
	State AdState
	// Query keeps the ads whose titles start with it, in any case (all
	// when empty).
	Query string
	// CampaignID keeps the ads of that campaign (0: every ad).
	CampaignID int64
	// Approval keeps the ads of campaigns in that approval state
	// (StatePending, StateDraft, StateActive; "": every ad).
	Approval string
	Now      time.Time // the instant State is judged at
	Offset   int
	Limit    int
}

// ListFilter selects a page of advertisers, campaigns or placements: in
// a state (""), of a parent (an advertiser's campaigns; 0: any), whose
// names start with Query (any case; "": all).
type ListFilter struct {
	State  string
	Parent int64
	Query  string
	Offset int
	Limit  int
}

// ListAll gathers every page that list gives of f, 1,000 rows at a time
// (f's Offset and Limit are set page by page).
func ListAll[T any](ctx context.Context, f ListFilter, list func(context.Context, ListFilter) ([]T, int, error)) ([]T, error) {
	const page = 1000
	var all []T
	for f.Offset, f.Limit = 0, page; ; f.Offset += page {
		got, _, err := list(ctx, f)
		if err != nil {
			return nil, err
		}
		if all = append(all, got...); len(got) < page {
			return all, nil
		}
	}
}

// LinkFilter selects links (GET /api/v1/links?q=&tag=); what is set must
// hold.
type LinkFilter struct {
	// Query matches a link whose code starts with it (codes are
	// case-sensitive) or whose title holds it (in any case; SQLite folds
	// only ASCII letters).
	Query string
	Tag   string // a tag the link carries, as NormTag gives it
}

// ImportOptions say what a link import does (POST /api/v1/links/import,
// marquee links import).
type ImportOptions struct {
	// Skip keeps a link whose code is taken on its domain as it is; by
	// default the import replaces its url, title, tags, expiry, click
	// limit and redirect (its rules, destinations, ad and clicks stay).
	Skip bool
	// DryRun counts what the import would do and writes nothing.
	DryRun bool
}

// ImportResult is what a link import did (or, dry, would do).
type ImportResult struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Skipped   int `json:"skipped"`
}

// MaxSearchCount is where a title search (AdFilter.Query) stops counting
// its matches: a short prefix may match most of a million ads, and
// counting them all would cost a scan per keystroke. A store counts at
// most MaxSearchCount+1.
const MaxSearchCount = 10_000

// ChangeOp is what a changelog entry says happened.
type ChangeOp string

// The changelog's operations.
const (
	OpPut    ChangeOp = "put"    // the entity was created or changed: read it again
	OpDelete ChangeOp = "delete" // the entity is gone
	OpReload ChangeOp = "reload" // anything may have changed (bulk load): reload everything; of EntityLink, any link may have (an import)
)

// The changelog's entities (also the audit log's and the reports'): the
// one list of their names.
const (
	EntityAd   = "ad"
	EntityLink = "link"
	// The plan ads serve under (docs/api.md#campaigns).
	EntityAdvertiser = "advertiser"
	EntityCampaign   = "campaign"
	EntityPlacement  = "placement"
	// Entities of access: every instance drops what it caches of them
	// when one changes.
	EntityKey     = "key"
	EntityUser    = "user"
	EntitySession = "session"
	// Webhooks: every instance reads them again when one changes.
	EntityWebhook = "webhook"
	// A saved report (and its schedule): nothing is cached of it, the
	// entry is the audit log's.
	EntitySavedReport = "savedReport"
	// A top-up of a prepaid balance: nothing is cached of it, the entry
	// is the audit log's (its credit logs its advertiser as well, whose
	// balance every instance reads again).
	EntityTopUp = "topUp"
	// The documents of money (invoices and credit notes, statements) and
	// the sites publishers are paid for: nothing is cached of them, the
	// entry is the audit log's, with what changed (before and after).
	EntityInvoice   = "invoice"
	EntityStatement = "statement"
	EntitySite      = "site"
	// An erased data subject: the change's id is one of its pseudonyms
	// (a uint64 as int64), which every instance's counters forget.
	EntitySubject = "subject"
	// A setting of the install chosen at run time, keyed by its name
	// (one of the Setting names): every instance reads it again.
	EntitySetting = "setting"
)

// AuditEntities are the kinds of what the audit log records, in the
// order the console offers them: the changelog's, and the documents of
// money (docs/api.md#audit-log).
var AuditEntities = []string{EntityAd, EntityLink, EntityAdvertiser, EntityCampaign, EntityPlacement, EntitySite, EntityDeal,
	EntityDemandPartner, EntityTopUp, EntityInvoice, EntityStatement, EntitySavedReport, EntityKey, EntityUser, EntitySession, EntityWebhook, EntitySubject, EntitySetting}

// The settings an install chooses at run time (docs/api.md#settings).
const (
	// SettingReportKeys are the key-value keys reports count by value,
	// comma-separated (at most three; "" none).
	SettingReportKeys = "reportKeys"
)

// Change is one changelog entry, written in the same transaction as the
// change it records. Seqs grow in commit order; every instance applies them
// in that order from its last applied seq.
type Change struct {
	Seq    int64
	Entity string // one of the Entity names; "" with OpReload
	ID     int64  // 0 with OpReload
	Key    string // a link's code
	Op     ChangeOp
	At     time.Time // commit time, millisecond precision
}

// Batch is what one read of the changelog changed, by entity, for the
// views an instance keeps in memory (the ad index, the decisions' plan,
// the caches, access, webhooks): or, with Reload, anything — the feed
// reloaded (at start, after a gap, a trimmed position, a bulk load or an
// outage) and every view reads what it holds again. The feed hands each
// batch to every Applier in turn, in changelog order.
type Batch struct {
	// Reload: everything may have changed. EachLiveAd then walks every
	// live ad from the store (each call reads them again: the index
	// walks them; the delivery plan reads only its campaigns' ads).
	Reload     bool
	EachLiveAd func(fn func(*Ad) error) error
	// Ads are the ids of the ads the batch names: Put holds the rows of
	// those that exist (as read after the batch), Deleted the others.
	Ads     []int64
	Put     []*Ad
	Deleted []int64
	// Links are the codes of the links named (AllLinks: an import, any
	// link may have changed).
	Links    []string
	AllLinks bool
	// Campaigns and Advertisers by id, Placements by name.
	Campaigns   []int64
	Advertisers []int64
	Placements  []string
	// Access: a key, user or session changed. Webhooks: a webhook did.
	// Deals: a deal did. Sites: a site did. DemandPartners: a demand
	// partner did.
	Access, Webhooks, Deals, Sites, DemandPartners bool
	// Settings are the names of the settings changed.
	Settings []string
	// Subjects are the pseudonyms of the data subjects erased (a reload
	// does not replay the erasures it jumps over: docs/privacy.md).
	Subjects []uint64
}

// An Applier is a view in memory that the feed keeps current. Apply is
// called from the feed's goroutine only, with each batch in changelog
// order; an error leaves the batch to be applied again (every view applies
// a batch idempotently).
type Applier interface {
	Apply(ctx context.Context, b *Batch) error
}

// ApplyFunc is a function as an Applier.
type ApplyFunc func(ctx context.Context, b *Batch) error

// Apply calls f.
func (f ApplyFunc) Apply(ctx context.Context, b *Batch) error { return f(ctx, b) }
