package sqltx

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// CreateLink stores a new link, with a generated code when in.Code is ""
// (see insertLink).
func (s *Store) CreateLink(ctx context.Context, in marquee.LinkInput) (marquee.Link, error) {
	return write(ctx, s, "create link", func(tx Tx, now time.Time) (marquee.Link, error) {
		if err := checkAd(ctx, tx, in.AdID); err != nil {
			return marquee.Link{}, err
		}
		return s.insertLink(ctx, tx, in, false, now)
	})
}

// ReplaceLink replaces every field of link key (marquee.LinkKey) that a
// client sets but the domain and code; its clicks stay. It returns
// marquee.NoLink if there is no such link, a KindConflict error if it is
// an ad's tracking link.
func (s *Store) ReplaceLink(ctx context.Context, key string, in marquee.LinkInput) (marquee.Link, error) {
	return write(ctx, s, "replace link", func(tx Tx, now time.Time) (marquee.Link, error) {
		domain, code := marquee.SplitLinkKey(key)
		p := marquee.Problems{}
		if in.Code != "" && in.Code != code {
			p["code"] = "cannot change; create a new link and delete this one"
		}
		if in.Domain != "" && in.Domain != domain {
			p["domain"] = "cannot change; create a new link on the other domain and delete this one"
		}
		if err := marquee.Invalid("invalid link", p); err != nil {
			return marquee.Link{}, err
		}
		if err := checkAd(ctx, tx, in.AdID); err != nil {
			return marquee.Link{}, err
		}
		in.Domain, in.Code = domain, code
		var id, clicks, created int64
		err := tx.QueryRow(ctx, `SELECT id, created_at FROM links WHERE domain = ? AND code = ? AND ad_owned = 0`+s.cfg.ForUpdate, domain, code).Scan(&id, &created)
		if errors.Is(err, ErrNoRows) {
			return marquee.Link{}, whyNoLink(ctx, tx, domain, code)
		}
		if err != nil {
			return marquee.Link{}, err
		}
		tags, rules, dests, err := linkJSON(in)
		if err != nil {
			return marquee.Link{}, err
		}
		if _, err := tx.Exec(ctx, `UPDATE links SET url = ?, title = ?, tags = ?, rules = ?, destinations = ?, expires_at = ?, max_clicks = ?, redirect = ?, ad_id = ?, updated_at = ? WHERE id = ?`,
			in.URL, in.Title, tags, rules, dests, millis(in.ExpiresAt), in.MaxClicks, in.Redirect, in.AdID, now.UnixMilli(), id); err != nil {
			return marquee.Link{}, err
		}
		if err := setTags(ctx, tx, id, in.Tags); err != nil {
			return marquee.Link{}, err
		}
		if err := tx.QueryRow(ctx, `SELECT `+clicksOf+` FROM links WHERE id = ?`, id).Scan(&clicks); err != nil {
			return marquee.Link{}, err
		}
		return in.Link(id, clicks, time.UnixMilli(created).UTC(), now), tx.LogChange(ctx, marquee.EntityLink, id, code, marquee.OpPut)
	})
}

// DeleteLink deletes link key; errors as ReplaceLink's.
func (s *Store) DeleteLink(ctx context.Context, key string) error {
	return exec(ctx, s, "delete link", func(tx Tx, _ time.Time) error {
		domain, code := marquee.SplitLinkKey(key)
		var id int64
		err := tx.QueryRow(ctx, `SELECT id FROM links WHERE domain = ? AND code = ? AND ad_owned = 0`+s.cfg.ForUpdate, domain, code).Scan(&id)
		if errors.Is(err, ErrNoRows) {
			return whyNoLink(ctx, tx, domain, code)
		}
		if err != nil {
			return err
		}
		return deleteLink(ctx, tx, id, code)
	})
}

// AddClicks adds counted redirects to links' clicks in one transaction,
// Config.ClickBatch links a statement (see addClicks).
func (s *Store) AddClicks(ctx context.Context, counts []marquee.Clicks) error {
	return exec(ctx, s, "add clicks", func(tx Tx, _ time.Time) error { return s.addClicks(ctx, tx, counts) })
}

// Link returns link key (marquee.LinkKey), or marquee.NoLink.
func (s *Store) Link(ctx context.Context, key string) (marquee.Link, error) {
	return withDB(ctx, s, "get link", func(db DB) (marquee.Link, error) { return link(ctx, db, key) })
}

// LinkTarget returns what a redirect needs of link key (see target), or
// marquee.NoLink.
func (s *Store) LinkTarget(ctx context.Context, key string) (marquee.Link, error) {
	return lookup(ctx, s, "get link", func(db DB) (marquee.Link, error) { return target(ctx, db, key) })
}

// ListLinks returns one page of links, newest first, and how many there
// are.
func (s *Store) ListLinks(ctx context.Context, offset, limit int) ([]marquee.Link, int, error) {
	var total int
	links, err := withDB(ctx, s, "list links", func(db DB) (l []marquee.Link, err error) {
		l, total, err = listLinks(ctx, db, offset, limit)
		return l, err
	})
	return links, total, err
}

// SearchLinks returns one page of the links f selects — by code when
// f.Query is set (a range of the code index, or a title that holds it),
// else newest first — and how many there are, counting at most
// marquee.MaxSearchCount+1.
func (s *Store) SearchLinks(ctx context.Context, f marquee.LinkFilter, offset, limit int) ([]marquee.Link, int, error) {
	var where []string
	var args []any
	order := `id DESC`
	if f.Query != "" {
		code := `code` + s.cfg.ByteOrder
		// Above every code starting with the query: codes are [A-Za-z0-9_-].
		where = append(where, `(`+code+` >= ? AND `+code+` < ? OR lower(title) LIKE ? ESCAPE '!')`)
		args = append(args, f.Query, f.Query+"\x7f", "%"+likeEscaper.Replace(strings.ToLower(f.Query))+"%")
		order = code
	}
	if f.Tag != "" {
		where = append(where, `id IN (SELECT link_id FROM link_tags WHERE tag = ?)`)
		args = append(args, f.Tag)
	}
	from := ` FROM links`
	if len(where) > 0 {
		from += ` WHERE ` + strings.Join(where, ` AND `)
	}
	var total int
	links, err := withDB(ctx, s, "search links", func(db DB) (l []marquee.Link, err error) {
		err = db.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1`+from+` LIMIT `+strconv.Itoa(marquee.MaxSearchCount+1)+`) AS matches`,
			args...).Scan(&total)
		if err != nil {
			return nil, err
		}
		return query(ctx, db, func(r Rows) (marquee.Link, error) { return scanLink(r) },
			`SELECT `+linkColumns+from+` ORDER BY `+order+` LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	})
	return links, total, err
}

// likeEscaper escapes LIKE's wildcards, with "!" as the escape character
// (ESCAPE '!': every dialect's default differs).
var likeEscaper = strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")

// linkColumns are a links row's columns in scanLink's order, its clicks
// from link_clicks.
const linkColumns = `id, domain, code, url, title, tags, rules, destinations, expires_at, max_clicks, redirect, ad_id, ` + clicksOf + `, created_at, updated_at`

// clicksOf is a links row's clicks.
const clicksOf = `coalesce((SELECT c.clicks FROM link_clicks c WHERE c.link_id = links.id), 0)`

// scanLink reads a row selected as LinkColumns.
func scanLink(r Row) (marquee.Link, error) {
	var l marquee.Link
	var expires, created, updated int64
	var tags, rules, dests string
	if err := r.Scan(&l.ID, &l.Domain, &l.Code, &l.URL, &l.Title, &tags, &rules, &dests, &expires, &l.MaxClicks, &l.Redirect, &l.AdID, &l.Clicks, &created, &updated); err != nil {
		return l, err
	}
	if expires != 0 {
		l.ExpiresAt = time.UnixMilli(expires).UTC()
	}
	l.CreatedAt, l.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return l, scanLinkJSON(&l, tags, rules, dests)
}

// linkJSON is how the tags, rules and destinations of in are stored:
// JSON, and "" for none.
func linkJSON(in marquee.LinkInput) (tags, rules, dests string, err error) {
	enc := func(n int, v any) string {
		if n == 0 || err != nil {
			return ""
		}
		var b []byte
		b, err = json.Marshal(v)
		return string(b)
	}
	return enc(len(in.Tags), in.Tags), enc(len(in.Rules), in.Rules), enc(len(in.Destinations), in.Destinations), err
}

// scanLinkJSON reads into l the tags, rules and destinations linkJSON
// stored.
func scanLinkJSON(l *marquee.Link, tags, rules, dests string) error {
	var err error
	if tags != "" {
		err = json.Unmarshal([]byte(tags), &l.Tags)
	}
	if rules != "" && err == nil {
		l.Rules, err = decodeRules(rules)
	}
	if dests != "" && err == nil {
		l.Destinations, err = decodeDestinations(dests)
	}
	if err != nil {
		return fmt.Errorf("link %d: stored JSON: %w", l.ID, err)
	}
	return nil
}

// setTags makes link id's rows of link_tags its tags.
func setTags(ctx context.Context, tx Tx, id int64, tags []string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM link_tags WHERE link_id = ?`, id); err != nil || len(tags) == 0 {
		return err
	}
	args := make([]any, 0, 2*len(tags))
	for _, t := range tags {
		args = append(args, t, id)
	}
	_, err := tx.Exec(ctx, `INSERT INTO link_tags (tag, link_id) VALUES `+Tuples(len(tags), 2), args...)
	return err
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// generateTries bounds the generated codes tried before giving up; with
// 55^7 codes a collision is rare until billions are stored.
const generateTries = 8

// insertLink stores a new link. An empty in.Code gets a generated one,
// drawn again on a collision; a custom code that is taken is a
// marquee.KindConflict error.
func (s *Store) insertLink(ctx context.Context, tx Tx, in marquee.LinkInput, owned bool, now time.Time) (marquee.Link, error) {
	custom := in.Code != ""
	tags, rules, dests, err := linkJSON(in)
	if err != nil {
		return marquee.Link{}, err
	}
	ownedCol := 0
	if owned {
		ownedCol = 1
	}
	for range generateTries {
		if !custom {
			in.Code = marquee.NewCode()
		}
		id, err := s.insertID(ctx, tx, `INSERT INTO links (domain, code, url, title, tags, rules, destinations, expires_at, max_clicks, redirect, ad_id, ad_owned, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, "domain, code",
			in.Domain, in.Code, in.URL, in.Title, tags, rules, dests, millis(in.ExpiresAt), in.MaxClicks, in.Redirect, in.AdID, ownedCol, now.UnixMilli(), now.UnixMilli())
		switch {
		case errors.Is(err, errDuplicate) && custom && in.Domain != "":
			return marquee.Link{}, marquee.Errorf(marquee.KindConflict, "code %q is taken on %s", in.Code, in.Domain)
		case errors.Is(err, errDuplicate) && custom:
			return marquee.Link{}, marquee.Errorf(marquee.KindConflict, "code %q is taken", in.Code)
		case errors.Is(err, errDuplicate):
			continue
		case err != nil:
			return marquee.Link{}, err
		}
		if err := setTags(ctx, tx, id, in.Tags); err != nil {
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
		return marquee.Invalid("invalid link", marquee.Problems{"adId": fmt.Sprintf("no ad %d", adID)})
	}
	return err
}

// deleteLink deletes link id (code) with its clicks and tags and logs
// its deletion.
func deleteLink(ctx context.Context, tx Tx, id int64, code string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM links WHERE id = ?`, id); err != nil {
		return err
	}
	if err := setTags(ctx, tx, id, nil); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM link_clicks WHERE link_id = ?`, id); err != nil {
		return err
	}
	return tx.LogChange(ctx, marquee.EntityLink, id, code, marquee.OpDelete)
}

// whyNoLink tells a missing link from an ad's tracking link.
func whyNoLink(ctx context.Context, tx Tx, domain, code string) error {
	var adID int64
	err := tx.QueryRow(ctx, `SELECT ad_id FROM links WHERE domain = ? AND code = ?`, domain, code).Scan(&adID)
	switch {
	case errors.Is(err, ErrNoRows):
		return marquee.NoLink(marquee.LinkKey(domain, code))
	case err != nil:
		return err
	}
	return marquee.Errorf(marquee.KindConflict, "link %q is the tracking link of ad %d; change or delete the ad", code, adID)
}

// link returns link key, or marquee.NoLink.
func link(ctx context.Context, db DB, key string) (marquee.Link, error) {
	domain, code := marquee.SplitLinkKey(key)
	l, err := scanLink(db.QueryRow(ctx, `SELECT `+linkColumns+` FROM links WHERE domain = ? AND code = ?`, domain, code))
	if errors.Is(err, ErrNoRows) {
		return l, marquee.NoLink(key)
	}
	return l, err
}

// target returns what a redirect needs of link key — its id, url,
// rules, destinations, expiry, limit, status and ad, and its clicks only
// when it has a limit (they are 0 otherwise) — or marquee.NoLink. Not its
// title, tags or timestamps, and no read of link_clicks for most links:
// this is a cache miss's query.
func target(ctx context.Context, db DB, key string) (marquee.Link, error) {
	domain, code := marquee.SplitLinkKey(key)
	l := marquee.Link{Domain: domain, Code: code}
	var expires int64
	var rules, dests string
	err := db.QueryRow(ctx, `SELECT id, url, rules, destinations, expires_at, max_clicks, redirect, ad_id,
		CASE WHEN max_clicks > 0 THEN `+clicksOf+` ELSE 0 END FROM links WHERE domain = ? AND code = ?`, domain, code).
		Scan(&l.ID, &l.URL, &rules, &dests, &expires, &l.MaxClicks, &l.Redirect, &l.AdID, &l.Clicks)
	if errors.Is(err, ErrNoRows) {
		return l, marquee.NoLink(key)
	}
	if err != nil {
		return l, err
	}
	if expires != 0 {
		l.ExpiresAt = time.UnixMilli(expires).UTC()
	}
	return l, scanLinkJSON(&l, "", rules, dests)
}

// listLinks returns one page of links, newest first, and how many there
// are.
func listLinks(ctx context.Context, db DB, offset, limit int) ([]marquee.Link, int, error) {
	var total int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM links`).Scan(&total); err != nil {
		return nil, 0, err
	}
	links, err := query(ctx, db, func(r Rows) (marquee.Link, error) { return scanLink(r) },
		`SELECT `+linkColumns+` FROM links ORDER BY id DESC LIMIT ? OFFSET ?`, limit, offset)
	return links, total, err
}

// addClicks adds counted redirects to links' clicks (link_clicks), in
// link id order, Config.ClickBatch links a statement. The links of a
// batch are read (and locked, where the dialect locks rows) first, in id
// order, so that two instances flushing at once lock rows in the same
// order, and a link deleted meanwhile gets no count. A link with a click limit gets a changelog entry, so
// that every instance reloads its count (the others' caches hold the
// count the limit is judged by); the rest change nothing a redirect
// reads, and write only their count.
func (s *Store) addClicks(ctx context.Context, tx Tx, counts []marquee.Clicks) error {
	counts = slices.SortedFunc(slices.Values(counts), func(a, b marquee.Clicks) int { return cmp.Compare(a.LinkID, b.LinkID) })
	batch := max(1, s.cfg.ClickBatch)
	upsert := s.upsert("link_clicks", "link_id", []string{"clicks"}, nil)
	for len(counts) > 0 {
		chunk := counts[:min(batch, len(counts))]
		counts = counts[len(chunk):]
		ids := make([]any, len(chunk))
		n := map[int64]int64{}
		for i, c := range chunk {
			ids[i] = c.LinkID
			n[c.LinkID] += c.N
		}
		type stored struct {
			id, limit int64
			code      string
		}
		links, err := query(ctx, tx, func(r Rows) (l stored, err error) { return l, r.Scan(&l.id, &l.code, &l.limit) },
			`SELECT id, code, max_clicks FROM links WHERE id IN (`+placeholders(len(ids))+`) ORDER BY id`+s.cfg.ForUpdate, ids...)
		if err != nil {
			return err
		}
		if len(links) == 0 {
			continue
		}
		args := make([]any, 0, 2*len(links))
		for _, l := range links {
			args = append(args, l.id, n[l.id])
		}
		if _, err := tx.Exec(ctx, `INSERT INTO link_clicks (link_id, clicks) VALUES `+Tuples(len(links), 2)+upsert, args...); err != nil {
			return err
		}
		for _, l := range links {
			if l.limit > 0 {
				if err := tx.LogChange(ctx, marquee.EntityLink, l.id, l.code, marquee.OpPut); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// syncAdLink brings ad adID's tracking link in line with its landing url
// and returns the link's code ("" for none): created when the ad gets a
// url, retargeted when it changes, deleted with the url (or the ad: call
// it with url "" after deleting the ad). code is the ad's link code
// before the change.
func (s *Store) syncAdLink(ctx context.Context, tx Tx, adID int64, code, url string, now time.Time) (string, error) {
	switch {
	case url != "" && code == "":
		l, err := s.insertLink(ctx, tx, marquee.LinkInput{URL: url, Redirect: marquee.DefaultRedirect, AdID: adID}, true, now)
		if err != nil {
			return "", err
		}
		_, err = tx.Exec(ctx, `UPDATE ads SET link_code = ? WHERE id = ?`, l.Code, adID)
		return l.Code, err
	case url != "":
		id, err := s.trackingLink(ctx, tx, adID, code)
		if err != nil {
			return "", err
		}
		if _, err := tx.Exec(ctx, `UPDATE links SET url = ?, updated_at = ? WHERE id = ?`, url, now.UnixMilli(), id); err != nil {
			return "", err
		}
		return code, tx.LogChange(ctx, marquee.EntityLink, id, code, marquee.OpPut)
	case code != "":
		id, err := s.trackingLink(ctx, tx, adID, code)
		if err != nil {
			return "", err
		}
		if _, err := tx.Exec(ctx, `UPDATE ads SET link_code = '' WHERE id = ?`, adID); err != nil {
			return "", err
		}
		return "", deleteLink(ctx, tx, id, code)
	}
	return "", nil
}

// trackingLink locks ad adID's tracking link code and returns its id.
func (s *Store) trackingLink(ctx context.Context, tx Tx, adID int64, code string) (int64, error) {
	var id int64
	if err := tx.QueryRow(ctx, `SELECT id FROM links WHERE domain = '' AND code = ?`+s.cfg.ForUpdate, code).Scan(&id); err != nil {
		return 0, fmt.Errorf("tracking link %q of ad %d: %w", code, adID, err)
	}
	return id, nil
}
