// Package store names the contract every store meets — the union of what
// its consumers declare (the HTTP edge, the feed, the click counter) and
// what seeding and shutdown need — so that the binary and the conformance
// suite (storetest) hold them to the same one. The stores are
// store/sqlite and store/postgres, both written over store/sqltx.
package store

import (
	"context"
	"time"

	"marquee"
	"marquee/auth"
	"marquee/clicks"
	"marquee/feed"
	"marquee/reports"
	"marquee/web"
)

// Store is everything a store provides.
type Store interface {
	web.AdStore
	web.LinkStore
	web.AccessStore
	auth.Store
	TrimAudit(ctx context.Context, before time.Time) (int64, error)
	// Full reports whether the last write failed for lack of disk space.
	Full() bool
	// StoreID is the database's random id (what a saved index is tied to).
	StoreID(ctx context.Context) (string, error)
	TrimSessions(ctx context.Context, now, idleBefore, failuresBefore time.Time) (int64, error)
	feed.Source
	clicks.Store
	reports.Store
	reports.Reader
	RollUpReports(ctx context.Context, cutoff int64) (int64, error)
	ReplaceReports(ctx context.Context, b *reports.Batch, from, to int64) error
	// InsertAds and InsertLinks store many rows in one transaction (for
	// seeding) with a single "reload" changelog entry, calling progress
	// after each row; the rows are sqltx.BulkAdRow's and BulkLinkRow's
	// (a bulk-inserted ad has no url).
	InsertAds(ctx context.Context, ins []marquee.AdInput, progress func()) error
	InsertLinks(ctx context.Context, ins []marquee.LinkInput, progress func()) error
	Close() error
}
