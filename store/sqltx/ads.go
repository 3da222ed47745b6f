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
	"marquee/store/adrow"
)

// CreateAd stores a new ad (and its tracking link when it has a url) and
// returns it with its id; an ad of a campaign is active (approved).
func (s *Store) CreateAd(ctx context.Context, in marquee.AdInput) (marquee.Ad, error) {
	return s.CreateAdAs(ctx, in, marquee.StateActive)
}

// CreateAdAs is CreateAd, the ad in state (active, or pending approval:
// an advertiser's account wrote it).
func (s *Store) CreateAdAs(ctx context.Context, in marquee.AdInput, state string) (marquee.Ad, error) {
	return write(ctx, s, "create ad", func(tx Tx, now time.Time) (marquee.Ad, error) {
		conds, err := adrow.Conditions(in)
		if err != nil {
			return marquee.Ad{}, err
		}
		x, warnings, err := s.checkAdRefs(ctx, tx, in)
		if err != nil {
			return marquee.Ad{}, err
		}
		id, err := s.insertID(ctx, tx, `INSERT INTO ads (title, start_at, end_at, conditions, created_at, updated_at, url, title_key,
			campaign_id, creative, placements, targeting, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, "",
			in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(), conds, now.UnixMilli(), now.UnixMilli(), in.URL, TitleKey(in.Title),
			in.CampaignID, x.Creative, x.Placements, x.Targeting, state)
		if err != nil {
			return marquee.Ad{}, err
		}
		if err := tx.LogChange(ctx, marquee.EntityAd, id, "", marquee.OpPut); err != nil {
			return marquee.Ad{}, err
		}
		link, err := s.syncAdLink(ctx, tx, id, "", in.URL, now)
		a := in.Ad(id, link, now, now)
		a.Warnings = warnings
		if in.CampaignID != 0 {
			a.State = state
		}
		return a, err
	})
}

// ReplaceAd replaces every client field of ad id; it returns marquee.NoAd
// if there is no such ad. The ad is active (approved) after, or paused if
// it was.
func (s *Store) ReplaceAd(ctx context.Context, id int64, in marquee.AdInput) (marquee.Ad, error) {
	return s.ReplaceAdAs(ctx, id, in, marquee.StateActive)
}

// ReplaceAdAs is ReplaceAd, the ad in state after (pending again, when an
// advertiser's account changed it).
func (s *Store) ReplaceAdAs(ctx context.Context, id int64, in marquee.AdInput, state string) (marquee.Ad, error) {
	return write(ctx, s, "replace ad", func(tx Tx, now time.Time) (marquee.Ad, error) {
		conds, err := adrow.Conditions(in)
		if err != nil {
			return marquee.Ad{}, err
		}
		x, warnings, err := s.checkAdRefs(ctx, tx, in)
		if err != nil {
			return marquee.Ad{}, err
		}
		var created int64
		var link, was string
		err = tx.QueryRow(ctx, `SELECT created_at, link_code, state FROM ads WHERE id = ?`+s.cfg.ForUpdate, id).Scan(&created, &link, &was)
		if errors.Is(err, ErrNoRows) {
			return marquee.Ad{}, marquee.NoAd(id)
		}
		if err != nil {
			return marquee.Ad{}, err
		}
		if was == marquee.StatePaused && state == marquee.StateActive {
			state = was // the team's change of a paused ad keeps it paused
		}
		if _, err := tx.Exec(ctx, `UPDATE ads SET title = ?, start_at = ?, end_at = ?, conditions = ?, updated_at = ?, url = ?, title_key = ?,
			campaign_id = ?, creative = ?, placements = ?, targeting = ?, state = ? WHERE id = ?`,
			in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(), conds, now.UnixMilli(), in.URL, TitleKey(in.Title),
			in.CampaignID, x.Creative, x.Placements, x.Targeting, state, id); err != nil {
			return marquee.Ad{}, err
		}
		if err := tx.LogChange(ctx, marquee.EntityAd, id, "", marquee.OpPut); err != nil {
			return marquee.Ad{}, err
		}
		link, err = s.syncAdLink(ctx, tx, id, link, in.URL, now)
		a := in.Ad(id, link, time.UnixMilli(created).UTC(), now)
		a.Warnings = warnings
		if in.CampaignID != 0 {
			a.State = state
		}
		return a, err
	})
}

// MoveAd takes action (marquee.AdMoves: approve, reject with reason,
// pause, resume) on ad id of a campaign, checked against its state under
// the row's lock; an approval or a rejection records its review (by the
// audit's actor).
func (s *Store) MoveAd(ctx context.Context, id int64, action, reason string) (marquee.Ad, error) {
	m, ok := marquee.AdMoves[action]
	if !ok {
		return marquee.Ad{}, fmt.Errorf("move ad %d: no action %q", id, action)
	}
	return write(ctx, s, "change ad state", func(tx Tx, now time.Time) (marquee.Ad, error) {
		var r adrow.Row
		err := tx.QueryRow(ctx, `SELECT `+adrow.Columns+` FROM ads WHERE id = ?`+s.cfg.ForUpdate, id).Scan(r.Dest()...)
		if errors.Is(err, ErrNoRows) {
			return marquee.Ad{}, marquee.NoAd(id)
		}
		if err != nil {
			return marquee.Ad{}, err
		}
		a, err := r.Ad()
		if err != nil {
			return a, err
		}
		if a.CampaignID == 0 {
			return a, marquee.Errorf(marquee.KindConflict, "ad %d is in no campaign: it needs no approval", id)
		}
		if err := m.CheckOf("ad", id, a.State); err != nil || a.State == m.To {
			return a, err
		}
		if action == marquee.ActionApprove || action == marquee.ActionReject {
			au, _ := marquee.AuditFrom(ctx)
			prev := a.Review
			a.Review = &marquee.Review{Action: action, Reason: reason, By: cmp.Or(au.Actor, "anonymous"), At: now}
			switch {
			case action == marquee.ActionApprove: // what was approved, for the next review to compare with
				a.Review.Approved = &marquee.ApprovedAd{Title: a.Title, URL: a.URL, Creative: a.Creative}
			case prev != nil:
				a.Review.Approved = prev.Approved
			}
		}
		var doc any // NULL without a review
		if a.Review != nil {
			b, err := json.Marshal(a.Review)
			if err != nil {
				return a, err
			}
			doc = string(b)
		}
		if _, err := tx.Exec(ctx, `UPDATE ads SET state = ?, review = ?, updated_at = ? WHERE id = ?`, m.To, doc, now.UnixMilli(), id); err != nil {
			return a, err
		}
		a.State, a.UpdatedAt = m.To, now
		return a, tx.LogChange(ctx, marquee.EntityAd, id, "", marquee.OpPut)
	})
}

// checkAdRefs checks what an ad names beyond the contract — its campaign
// exists and is not archived, its placements exist — inside tx, and
// encodes its creative, placements and targeting for their columns. A bad
// reference is a 400 naming the field.
func (s *Store) checkAdRefs(ctx context.Context, tx Tx, in marquee.AdInput) (x adrow.Extras, warnings marquee.Problems, err error) {
	p := marquee.Problems{}
	if in.CampaignID != 0 {
		var state string
		var start, end int64
		err := tx.QueryRow(ctx, `SELECT state, start_at, end_at FROM campaigns WHERE id = ?`, in.CampaignID).Scan(&state, &start, &end)
		switch {
		case errors.Is(err, ErrNoRows):
			p["campaignId"] = fmt.Sprintf("no campaign %d", in.CampaignID)
		case err != nil:
			return x, nil, err
		case state == marquee.StateArchived:
			p["campaignId"] = fmt.Sprintf("campaign %d is archived", in.CampaignID)
		default:
			warnings = marquee.FlightWarnings(in.StartAt, in.EndAt, time.UnixMilli(start), time.UnixMilli(end))
		}
	}
	for i, name := range in.Placements {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM placements WHERE name = ?`, name).Scan(&n); err != nil {
			return x, nil, err
		}
		if n == 0 {
			p[fmt.Sprintf("placements[%d]", i)] = fmt.Sprintf("no placement %q", name)
		}
	}
	if err := marquee.Invalid("invalid ad", p); err != nil {
		return x, nil, err
	}
	x, err = adrow.ExtrasOf(in)
	for k, v := range in.Creative.Warnings() {
		if warnings == nil {
			warnings = marquee.Problems{}
		}
		warnings[k] = v
	}
	return x, warnings, err
}

// DeleteAd deletes ad id and its tracking link; it returns marquee.NoAd
// if there is no such ad.
func (s *Store) DeleteAd(ctx context.Context, id int64) error {
	return exec(ctx, s, "delete ad", func(tx Tx, now time.Time) error {
		var link string
		err := tx.QueryRow(ctx, `SELECT link_code FROM ads WHERE id = ?`+s.cfg.ForUpdate, id).Scan(&link)
		if errors.Is(err, ErrNoRows) {
			return marquee.NoAd(id)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM ads WHERE id = ?`, id); err != nil {
			return err
		}
		if err := tx.LogChange(ctx, marquee.EntityAd, id, "", marquee.OpDelete); err != nil {
			return err
		}
		_, err = s.syncAdLink(ctx, tx, id, link, "", now)
		return err
	})
}

// Ad returns ad id, or marquee.NoAd.
func (s *Store) Ad(ctx context.Context, id int64) (marquee.Ad, error) {
	return lookup(ctx, s, "get ad", func(db DB) (marquee.Ad, error) {
		var r adrow.Row
		err := db.QueryRow(ctx, `SELECT `+adrow.Columns+` FROM ads WHERE id = ?`, id).Scan(r.Dest()...)
		if errors.Is(err, ErrNoRows) {
			return marquee.Ad{}, marquee.NoAd(id)
		}
		if err != nil {
			return marquee.Ad{}, err
		}
		return r.Ad()
	})
}

// ListAds returns one page of the ads in f.State whose titles start with
// f.Query (any case; all when empty), and how many there are in all: by
// id, or by title with a query (the order of the index that serves it).
// With a query the count stops at marquee.MaxSearchCount+1.
func (s *Store) ListAds(ctx context.Context, f marquee.AdFilter) ([]marquee.Ad, int, error) {
	now := f.Now.UnixMilli()
	var conds []string
	var args []any
	switch f.State {
	case marquee.AdsActive:
		conds, args = append(conds, `start_at < ? AND end_at > ?`), append(args, now, now)
	case marquee.AdsScheduled:
		conds, args = append(conds, `start_at >= ?`), append(args, now)
	case marquee.AdsExpired:
		conds, args = append(conds, `end_at <= ?`), append(args, now)
	}
	from, order, count := `ads`, `id`, `SELECT count(*) FROM ads %s`
	if f.State != marquee.AdsAll {
		// Most ads are in one state or another: read them in id order and
		// stop at the page (SQLite would otherwise sort a whole index
		// range by id), and stop counting at MaxSearchCount+1.
		from = s.cfg.ScanAds
		count = `SELECT count(*) FROM (SELECT 1 FROM ` + from + ` %s LIMIT ` + strconv.Itoa(marquee.MaxSearchCount+1) + `) AS matches`
	}
	if f.CampaignID != 0 {
		// A campaign's ads by the campaign index, by id.
		conds, args = append(conds, `campaign_id = ?`), append(args, f.CampaignID)
		from = `ads`
		count = `SELECT count(*) FROM ads %s`
	}
	if f.Approval != "" { // few wait for approval: a scan of the campaigns' ads
		conds, args = append(conds, `campaign_id <> 0 AND state = ?`), append(args, f.Approval)
		from = `ads`
		count = `SELECT count(*) FROM ads %s`
	}
	if f.Query != "" {
		lo := TitleKey(f.Query)
		hi := append(slices.Clone(lo), 0xff) // above every key starting with lo: UTF-8 has no 0xff byte
		conds, args = append(conds, `title_key >= ? AND title_key < ?`), append(args, lo, hi)
		from, order = `ads`, `title_key, id`
		count = `SELECT count(*) FROM (SELECT 1 FROM ads %s LIMIT ` + strconv.Itoa(marquee.MaxSearchCount+1) + `) AS matches`
	}
	where := ""
	if len(conds) > 0 {
		where = `WHERE ` + strings.Join(conds, ` AND `)
	}
	var total int
	ads, err := withDB(ctx, s, "list ads", func(db DB) ([]marquee.Ad, error) {
		if err := db.QueryRow(ctx, fmt.Sprintf(count, where), args...).Scan(&total); err != nil {
			return nil, err
		}
		rows, err := db.Query(ctx, `SELECT `+adrow.Columns+` FROM `+from+` `+where+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
			append(args, f.Limit, f.Offset)...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return adrow.Collect(rows)
	})
	return ads, total, err
}

// TitleKey is an ad title's search key: the title in lower case, as bytes.
func TitleKey(title string) []byte { return []byte(strings.ToLower(title)) }

// EachCampaignAd calls fn for every ad in a campaign that has not
// expired at now (a range of the campaign index), as EachLiveAd does.
func (s *Store) EachCampaignAd(ctx context.Context, now time.Time, fn func(*marquee.Ad) error) error {
	return s.eachAd(ctx, "load campaign ads", `ads WHERE campaign_id > 0 AND end_at > ?`, now, fn)
}

// EachLiveAd calls fn for every ad that has not expired at now (active or
// scheduled), in no particular order, and stops at fn's first error. fn is
// called from several goroutines at once (see adrow.Each).
func (s *Store) EachLiveAd(ctx context.Context, now time.Time, fn func(*marquee.Ad) error) error {
	return s.eachAd(ctx, "load ads", s.cfg.ScanAds+` WHERE end_at > ?`, now, fn)
}

// eachAd calls fn for every ad of `SELECT … FROM <from>` (from ends in a
// condition on now's unix milliseconds), decoding in parallel (see
// adrow.Each).
func (s *Store) eachAd(ctx context.Context, what, from string, now time.Time, fn func(*marquee.Ad) error) error {
	_, err := withDB(ctx, s, what, func(db DB) (struct{}, error) {
		return struct{}{}, adrow.Each(ctx, func(ctx context.Context, yield func(adrow.Row) error) error {
			rows, err := db.Query(ctx, `SELECT `+adrow.Columns+` FROM `+from, now.UnixMilli())
			if err != nil {
				return err
			}
			defer rows.Close()
			return adrow.Yield(rows, yield)
		}, fn)
	})
	return err
}
