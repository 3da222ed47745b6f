// Package sqltx is the store logic both SQL drivers share, written once
// against DB and Tx, which each driver adapts (database/sql for SQLite,
// pgx for PostgreSQL): the writes of ads with their tracking links, and
// links with their click counts. Queries use "?" placeholders; the
// PostgreSQL adapter numbers them.
package sqltx

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"marquee"
	"marquee/store/adrow"
)

// ErrNoRows is what Row.Scan returns when the query matched nothing.
var ErrNoRows = errors.New("no rows")

// Row is one result row.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set; Close may be called more than once.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// DB runs queries; a driver's pool and its transactions both are one.
type DB interface {
	// Exec runs a statement and returns how many rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// Tx is a transaction that can record its changes in the changelog.
type Tx interface {
	DB
	// LogChange writes the changelog entry of a change made in the
	// transaction; entries commit in seq order (see each store's txn).
	LogChange(ctx context.Context, entity string, id int64, key string, op marquee.ChangeOp) error
}

// LinkColumns are a links row's columns in scanLink's order, its clicks
// from link_clicks.
const LinkColumns = `id, code, url, expires_at, max_clicks, redirect, ad_id, ` + clicksOf + `, created_at, updated_at`

// clicksOf is a links row's clicks.
const clicksOf = `coalesce((SELECT c.clicks FROM link_clicks c WHERE c.link_id = links.id), 0)`

// LinksTable is the links table, the same on both databases (integer types
// are 64-bit on both; times are unix milliseconds, 0 for none), with the
// key's type as its argument. ad_owned marks an ad's tracking link, which
// changes only with its ad.
const LinksTable = `CREATE TABLE links (
		id         %s,
		code       text    NOT NULL UNIQUE,
		url        text    NOT NULL,
		expires_at bigint  NOT NULL DEFAULT 0,
		max_clicks bigint  NOT NULL DEFAULT 0,
		redirect   integer NOT NULL,
		ad_id      bigint  NOT NULL DEFAULT 0,
		ad_owned   integer NOT NULL DEFAULT 0,
		created_at bigint  NOT NULL,
		updated_at bigint  NOT NULL
	)`

// ClicksTable holds links' click counts apart from the links, with the
// key's type as its argument: a flush rewrites the pages of the rows it
// counts, and ~400 of these rows fit a page where ~40 links do (a flush
// of 20,000 of 1,000,000 links: 21 µs a link in the links table).
const ClicksTable = `CREATE TABLE link_clicks (
		link_id %s,
		clicks  bigint NOT NULL
	)`

// scanLink reads a row selected as LinkColumns.
func scanLink(r Row) (marquee.Link, error) {
	var l marquee.Link
	var expires, created, updated int64
	err := r.Scan(&l.ID, &l.Code, &l.URL, &expires, &l.MaxClicks, &l.Redirect, &l.AdID, &l.Clicks, &created, &updated)
	if expires != 0 {
		l.ExpiresAt = time.UnixMilli(expires).UTC()
	}
	l.CreatedAt, l.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return l, err
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// Writes are the write methods both stores have, written once: each runs
// one of this package's functions in a transaction of the store's, at the
// time of its clock (UTC, whole milliseconds), and names what failed. A
// store embeds a Writes made by NewWrites.
type Writes struct {
	begin      func(ctx context.Context, now time.Time, fn func(Tx) error) error
	now        func() time.Time
	clickBatch int
}

// NewWrites returns the writes over begin, which runs fn in a transaction
// whose changelog entries are stamped now (a store may stamp its own
// commit time instead); clickBatch is AddClicks' links a statement (see
// AddClicks).
func NewWrites(begin func(ctx context.Context, now time.Time, fn func(Tx) error) error, now func() time.Time, clickBatch int) Writes {
	return Writes{begin: begin, now: now, clickBatch: clickBatch}
}

// write runs fn in a transaction of w at now and names what failed.
func write[T any](ctx context.Context, w *Writes, what string, fn func(tx Tx, now time.Time) (T, error)) (T, error) {
	now := w.now().UTC().Truncate(time.Millisecond)
	var v T
	err := w.begin(ctx, now, func(tx Tx) error {
		var err error
		v, err = fn(tx, now)
		return err
	})
	if err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// CreateAd stores a new ad (see CreateAd).
func (w *Writes) CreateAd(ctx context.Context, in marquee.AdInput) (marquee.Ad, error) {
	return write(ctx, w, "create ad", func(tx Tx, now time.Time) (marquee.Ad, error) { return CreateAd(ctx, tx, in, now) })
}

// ReplaceAd replaces ad id (see ReplaceAd).
func (w *Writes) ReplaceAd(ctx context.Context, id int64, in marquee.AdInput) (marquee.Ad, error) {
	return write(ctx, w, "replace ad", func(tx Tx, now time.Time) (marquee.Ad, error) { return ReplaceAd(ctx, tx, id, in, now) })
}

// DeleteAd deletes ad id (see DeleteAd).
func (w *Writes) DeleteAd(ctx context.Context, id int64) error {
	_, err := write(ctx, w, "delete ad", func(tx Tx, now time.Time) (struct{}, error) { return struct{}{}, DeleteAd(ctx, tx, id, now) })
	return err
}

// CreateLink stores a new link, with a generated code when in.Code is ""
// (see CreateLink).
func (w *Writes) CreateLink(ctx context.Context, in marquee.LinkInput) (marquee.Link, error) {
	return write(ctx, w, "create link", func(tx Tx, now time.Time) (marquee.Link, error) { return CreateLink(ctx, tx, in, now) })
}

// ReplaceLink replaces link code's fields (see ReplaceLink).
func (w *Writes) ReplaceLink(ctx context.Context, code string, in marquee.LinkInput) (marquee.Link, error) {
	return write(ctx, w, "replace link", func(tx Tx, now time.Time) (marquee.Link, error) { return ReplaceLink(ctx, tx, code, in, now) })
}

// DeleteLink deletes link code (see DeleteLink).
func (w *Writes) DeleteLink(ctx context.Context, code string) error {
	_, err := write(ctx, w, "delete link", func(tx Tx, _ time.Time) (struct{}, error) { return struct{}{}, DeleteLink(ctx, tx, code) })
	return err
}

// AddClicks adds counted redirects to links' clicks in one transaction,
// NewWrites' clickBatch links a statement (see AddClicks).
func (w *Writes) AddClicks(ctx context.Context, counts []marquee.Clicks) error {
	_, err := write(ctx, w, "add clicks", func(tx Tx, _ time.Time) (struct{}, error) {
		return struct{}{}, AddClicks(ctx, tx, counts, w.clickBatch)
	})
	return err
}

// CreateAd stores a new ad (and its tracking link when it has a url) and
// returns it with its id; times are now.
func CreateAd(ctx context.Context, tx Tx, in marquee.AdInput, now time.Time) (marquee.Ad, error) {
	conds, err := adrow.Conditions(in)
	if err != nil {
		return marquee.Ad{}, err
	}
	var id int64
	err = tx.QueryRow(ctx, `INSERT INTO ads (title, start_at, end_at, conditions, created_at, updated_at, url)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(), conds, now.UnixMilli(), now.UnixMilli(), in.URL).Scan(&id)
	if err != nil {
		return marquee.Ad{}, err
	}
	if err := tx.LogChange(ctx, marquee.EntityAd, id, "", marquee.OpPut); err != nil {
		return marquee.Ad{}, err
	}
	link, err := SyncAdLink(ctx, tx, id, "", in.URL, now)
	return in.Ad(id, link, now, now), err
}

// ReplaceAd replaces every client field of ad id (its tracking link
// follows its url); it returns an error wrapping marquee.ErrNotFound if
// there is no such ad.
func ReplaceAd(ctx context.Context, tx Tx, id int64, in marquee.AdInput, now time.Time) (marquee.Ad, error) {
	conds, err := adrow.Conditions(in)
	if err != nil {
		return marquee.Ad{}, err
	}
	var created int64
	var link string
	err = tx.QueryRow(ctx, `UPDATE ads SET title = ?, start_at = ?, end_at = ?, conditions = ?, updated_at = ?, url = ?
		WHERE id = ? RETURNING created_at, link_code`,
		in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(), conds, now.UnixMilli(), in.URL, id).Scan(&created, &link)
	if errors.Is(err, ErrNoRows) {
		return marquee.Ad{}, fmt.Errorf("ad %d: %w", id, marquee.ErrNotFound)
	}
	if err != nil {
		return marquee.Ad{}, err
	}
	if err := tx.LogChange(ctx, marquee.EntityAd, id, "", marquee.OpPut); err != nil {
		return marquee.Ad{}, err
	}
	link, err = SyncAdLink(ctx, tx, id, link, in.URL, now)
	return in.Ad(id, link, time.UnixMilli(created).UTC(), now), err
}

// DeleteAd deletes ad id and its tracking link; it returns an error
// wrapping marquee.ErrNotFound if there is no such ad.
func DeleteAd(ctx context.Context, tx Tx, id int64, now time.Time) error {
	var link string
	err := tx.QueryRow(ctx, `DELETE FROM ads WHERE id = ? RETURNING link_code`, id).Scan(&link)
	if errors.Is(err, ErrNoRows) {
		return fmt.Errorf("ad %d: %w", id, marquee.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if err := tx.LogChange(ctx, marquee.EntityAd, id, "", marquee.OpDelete); err != nil {
		return err
	}
	_, err = SyncAdLink(ctx, tx, id, link, "", now)
	return err
}

// Ad returns ad id, or an error wrapping marquee.ErrNotFound.
func Ad(ctx context.Context, db DB, id int64) (marquee.Ad, error) {
	var r adrow.Row
	err := db.QueryRow(ctx, `SELECT `+adrow.Columns+` FROM ads WHERE id = ?`, id).Scan(r.Dest()...)
	if errors.Is(err, ErrNoRows) {
		return marquee.Ad{}, fmt.Errorf("ad %d: %w", id, marquee.ErrNotFound)
	}
	if err != nil {
		return marquee.Ad{}, fmt.Errorf("get ad %d: %w", id, err)
	}
	return r.Ad()
}

// generateTries bounds the generated codes tried before giving up; with
// 55^7 codes a collision is rare until billions are stored.
const generateTries = 8

// insertLink stores a new link. An empty in.Code gets a generated one,
// drawn again on a collision; a custom code that is taken is
// marquee.ErrConflict.
func insertLink(ctx context.Context, tx Tx, in marquee.LinkInput, owned bool, now time.Time) (marquee.Link, error) {
	custom := in.Code != ""
	ownedCol := 0
	if owned {
		ownedCol = 1
	}
	for range generateTries {
		if !custom {
			in.Code = marquee.NewCode()
		}
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO links (code, url, expires_at, max_clicks, redirect, ad_id, ad_owned, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (code) DO NOTHING RETURNING id`,
			in.Code, in.URL, millis(in.ExpiresAt), in.MaxClicks, in.Redirect, in.AdID, ownedCol, now.UnixMilli(), now.UnixMilli(),
		).Scan(&id)
		switch {
		case errors.Is(err, ErrNoRows) && custom:
			return marquee.Link{}, fmt.Errorf("code %q is taken: %w", in.Code, marquee.ErrConflict)
		case errors.Is(err, ErrNoRows):
			continue
		case err != nil:
			return marquee.Link{}, err
		}
		return in.Link(id, 0, now, now), tx.LogChange(ctx, marquee.EntityLink, id, in.Code, marquee.OpPut)
	}
	return marquee.Link{}, fmt.Errorf("no free code after %d tries", generateTries)
}

// checkAd reports an adId that names no ad as invalid input.
func checkAd(ctx context.Context, tx Tx, adID int64) error {
	if adID == 0 {
		return nil
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM ads WHERE id = ?`, adID).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return &marquee.InvalidError{What: "invalid link", Problems: marquee.Problems{"adId": fmt.Sprintf("no ad %d", adID)}}
	}
	return err
}

// CreateLink stores a new link (see insertLink).
func CreateLink(ctx context.Context, tx Tx, in marquee.LinkInput, now time.Time) (marquee.Link, error) {
	if err := checkAd(ctx, tx, in.AdID); err != nil {
		return marquee.Link{}, err
	}
	return insertLink(ctx, tx, in, false, now)
}

// ReplaceLink replaces every field of link code that a client sets but
// the code; its clicks stay. It returns marquee.ErrNotFound if there is
// no such link, marquee.ErrConflict if it is an ad's tracking link.
func ReplaceLink(ctx context.Context, tx Tx, code string, in marquee.LinkInput, now time.Time) (marquee.Link, error) {
	if in.Code != "" && in.Code != code {
		return marquee.Link{}, &marquee.InvalidError{What: "invalid link",
			Problems: marquee.Problems{"code": "cannot change; create a new link and delete this one"}}
	}
	if err := checkAd(ctx, tx, in.AdID); err != nil {
		return marquee.Link{}, err
	}
	in.Code = code
	var id, clicks, created int64
	err := tx.QueryRow(ctx, `UPDATE links SET url = ?, expires_at = ?, max_clicks = ?, redirect = ?, ad_id = ?, updated_at = ?
		WHERE code = ? AND ad_owned = 0 RETURNING id, created_at`,
		in.URL, millis(in.ExpiresAt), in.MaxClicks, in.Redirect, in.AdID, now.UnixMilli(), code).Scan(&id, &created)
	if errors.Is(err, ErrNoRows) {
		return marquee.Link{}, whyNoLink(ctx, tx, code)
	}
	if err != nil {
		return marquee.Link{}, err
	}
	if err := tx.QueryRow(ctx, `SELECT `+clicksOf+` FROM links WHERE id = ?`, id).Scan(&clicks); err != nil {
		return marquee.Link{}, err
	}
	return in.Link(id, clicks, time.UnixMilli(created).UTC(), now), tx.LogChange(ctx, marquee.EntityLink, id, code, marquee.OpPut)
}

// DeleteLink deletes link code; errors as ReplaceLink's.
func DeleteLink(ctx context.Context, tx Tx, code string) error {
	var id int64
	err := tx.QueryRow(ctx, `DELETE FROM links WHERE code = ? AND ad_owned = 0 RETURNING id`, code).Scan(&id)
	if errors.Is(err, ErrNoRows) {
		return whyNoLink(ctx, tx, code)
	}
	if err != nil {
		return err
	}
	return deleted(ctx, tx, id, code)
}

// deleted removes a deleted link's clicks and logs its deletion.
func deleted(ctx context.Context, tx Tx, id int64, code string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM link_clicks WHERE link_id = ?`, id); err != nil {
		return err
	}
	return tx.LogChange(ctx, marquee.EntityLink, id, code, marquee.OpDelete)
}

// whyNoLink tells a missing link from an ad's tracking link.
func whyNoLink(ctx context.Context, tx Tx, code string) error {
	var adID int64
	err := tx.QueryRow(ctx, `SELECT ad_id FROM links WHERE code = ?`, code).Scan(&adID)
	switch {
	case errors.Is(err, ErrNoRows):
		return fmt.Errorf("link %q: %w", code, marquee.ErrNotFound)
	case err != nil:
		return err
	}
	return fmt.Errorf("link %q is the tracking link of ad %d; change or delete the ad: %w", code, adID, marquee.ErrConflict)
}

// Link returns link code, or an error wrapping marquee.ErrNotFound.
func Link(ctx context.Context, db DB, code string) (marquee.Link, error) {
	l, err := scanLink(db.QueryRow(ctx, `SELECT `+LinkColumns+` FROM links WHERE code = ?`, code))
	if errors.Is(err, ErrNoRows) {
		return l, fmt.Errorf("link %q: %w", code, marquee.ErrNotFound)
	}
	return l, err
}

// Target returns what a redirect needs of link code — its id, url,
// expiry, limit, status and ad, and its clicks only when it has a limit
// (they are 0 otherwise) — or an error wrapping marquee.ErrNotFound. Half
// the columns of Link, and no read of link_clicks for most links: this is
// a cache miss's query.
func Target(ctx context.Context, db DB, code string) (marquee.Link, error) {
	l := marquee.Link{Code: code}
	var expires int64
	err := db.QueryRow(ctx, `SELECT id, url, expires_at, max_clicks, redirect, ad_id,
		CASE WHEN max_clicks > 0 THEN `+clicksOf+` ELSE 0 END FROM links WHERE code = ?`, code).
		Scan(&l.ID, &l.URL, &expires, &l.MaxClicks, &l.Redirect, &l.AdID, &l.Clicks)
	if errors.Is(err, ErrNoRows) {
		return l, fmt.Errorf("link %q: %w", code, marquee.ErrNotFound)
	}
	if expires != 0 {
		l.ExpiresAt = time.UnixMilli(expires).UTC()
	}
	return l, err
}

// ListLinks returns one page of links, newest first, and how many there
// are.
func ListLinks(ctx context.Context, db DB, offset, limit int) ([]marquee.Link, int, error) {
	var total int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM links`).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.Query(ctx, `SELECT `+LinkColumns+` FROM links ORDER BY id DESC LIMIT ? OFFSET ?`, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	links := []marquee.Link{}
	for rows.Next() {
		l, err := scanLink(rows)
		if err != nil {
			return nil, 0, err
		}
		links = append(links, l)
	}
	return links, total, rows.Err()
}

// AddClicks adds counted redirects to links' clicks (link_clicks), in
// link id order (two instances flushing at once lock rows in the same
// order), batch links a statement: 1 where a statement is cheap (SQLite in
// process, prepared once), more where each costs a round trip
// (PostgreSQL). A link with a click limit gets a changelog entry, so that
// every instance reloads its count (the others' caches hold the count the
// limit is judged by); the rest change nothing a redirect reads, and write
// only their count. Counts of links deleted meanwhile are dropped.
func AddClicks(ctx context.Context, tx Tx, counts []marquee.Clicks, batch int) error {
	counts = slices.SortedFunc(slices.Values(counts), func(a, b marquee.Clicks) int { return cmp.Compare(a.LinkID, b.LinkID) })
	if batch <= 1 {
		for _, c := range counts {
			var limit int64
			err := tx.QueryRow(ctx, `SELECT max_clicks FROM links WHERE id = ?`, c.LinkID).Scan(&limit)
			switch {
			case errors.Is(err, ErrNoRows):
				continue
			case err != nil:
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO link_clicks (link_id, clicks) VALUES (?, ?)
				ON CONFLICT (link_id) DO UPDATE SET clicks = link_clicks.clicks + excluded.clicks`, c.LinkID, c.N); err != nil {
				return err
			}
			if limit > 0 {
				if err := tx.LogChange(ctx, marquee.EntityLink, c.LinkID, c.Code, marquee.OpPut); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for len(counts) > 0 {
		chunk := counts[:min(batch, len(counts))]
		counts = counts[len(chunk):]
		var values, ids strings.Builder
		args := make([]any, 0, 2*len(chunk))
		idArgs := make([]any, 0, len(chunk))
		for i, c := range chunk {
			if i > 0 {
				values.WriteString(", ")
				ids.WriteString(", ")
			}
			values.WriteString(`(CAST(? AS bigint), CAST(? AS bigint))`)
			ids.WriteString(`?`)
			args = append(args, c.LinkID, c.N)
			idArgs = append(idArgs, c.LinkID)
		}
		// "WHERE true" tells SQLite's parser the ON CONFLICT is the
		// INSERT's, not the join's.
		if _, err := tx.Exec(ctx, `WITH v(id, n) AS (VALUES `+values.String()+`)
			INSERT INTO link_clicks (link_id, clicks) SELECT v.id, v.n FROM v JOIN links ON links.id = v.id WHERE true
			ON CONFLICT (link_id) DO UPDATE SET clicks = link_clicks.clicks + excluded.clicks`, args...); err != nil {
			return err
		}
		limited, err := limitedLinks(ctx, tx, `SELECT id, code FROM links WHERE max_clicks > 0 AND id IN (`+ids.String()+`)`, idArgs)
		if err != nil {
			return err
		}
		for _, l := range limited {
			if err := tx.LogChange(ctx, marquee.EntityLink, l.ID, l.Code, marquee.OpPut); err != nil {
				return err
			}
		}
	}
	return nil
}

// limitedLinks runs a query of (id, code).
func limitedLinks(ctx context.Context, tx Tx, query string, args []any) ([]marquee.Link, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []marquee.Link
	for rows.Next() {
		var l marquee.Link
		if err := rows.Scan(&l.ID, &l.Code); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// SyncAdLink brings ad adID's tracking link in line with its landing url
// and returns the link's code ("" for none): created when the ad gets a
// url, retargeted when it changes, deleted with the url (or the ad: call
// it with url "" after deleting the ad). code is the ad's link code
// before the change.
func SyncAdLink(ctx context.Context, tx Tx, adID int64, code, url string, now time.Time) (string, error) {
	switch {
	case url != "" && code == "":
		l, err := insertLink(ctx, tx, marquee.LinkInput{URL: url, Redirect: marquee.DefaultRedirect, AdID: adID}, true, now)
		if err != nil {
			return "", err
		}
		_, err = tx.Exec(ctx, `UPDATE ads SET link_code = ? WHERE id = ?`, l.Code, adID)
		return l.Code, err
	case url != "":
		var id int64
		err := tx.QueryRow(ctx, `UPDATE links SET url = ?, updated_at = ? WHERE code = ? RETURNING id`, url, now.UnixMilli(), code).Scan(&id)
		if err != nil {
			return "", fmt.Errorf("tracking link %q of ad %d: %w", code, adID, err)
		}
		return code, tx.LogChange(ctx, marquee.EntityLink, id, code, marquee.OpPut)
	case code != "":
		var id int64
		if err := tx.QueryRow(ctx, `DELETE FROM links WHERE code = ? RETURNING id`, code).Scan(&id); err != nil {
			return "", fmt.Errorf("tracking link %q of ad %d: %w", code, adID, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE ads SET link_code = '' WHERE id = ?`, adID); err != nil {
			return "", err
		}
		return "", deleted(ctx, tx, id, code)
	}
	return "", nil
}
