package sqltx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"marquee"
)

// Sites: a row each, keyed by name; the revenue share kept in millionths
// so that a share reads back as it was written; the seller id from
// seller_seq, bumped in the transaction that makes the site (a number
// never given twice).

const siteCols = `name, domains, revenue_share, seller_id, seller_type, confidential, ads_txt, quarantined, quality_alarm, child_directed, created_at, updated_at`

func scanSite(r Row) (marquee.Site, error) {
	var s marquee.Site
	var domains, sellerType string
	var adsTxt, alarm *string
	var share, seller, confidential, quarantined, child, created, updated int64
	if err := r.Scan(&s.Name, &domains, &share, &seller, &sellerType, &confidential, &adsTxt, &quarantined, &alarm, &child, &created, &updated); err != nil {
		return s, err
	}
	if alarm != nil && *alarm != "" {
		s.QualityAlarm = new(marquee.QualityAlarm)
		if err := json.Unmarshal([]byte(*alarm), s.QualityAlarm); err != nil {
			return s, fmt.Errorf("site %q: decode its quality alarm: %w", s.Name, err)
		}
	}
	s.Quarantined, s.ChildDirected = quarantined == 1, child == 1
	if adsTxt != nil && *adsTxt != "" {
		s.AdsTxt = new(marquee.AdsTxtCheck)
		if err := json.Unmarshal([]byte(*adsTxt), s.AdsTxt); err != nil {
			return s, fmt.Errorf("site %q: decode its ads.txt check: %w", s.Name, err)
		}
	}
	s.SellerID, s.SellerType, s.Confidential = strconv.FormatInt(seller, 10), marquee.SellerType(sellerType), confidential == 1
	if err := json.Unmarshal([]byte(domains), &s.Domains); err != nil {
		return s, fmt.Errorf("site %q: decode domains: %w", s.Name, err)
	}
	s.RevenueShare = float64(share) / 1e6
	s.CreatedAt, s.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return s, nil
}

func shareOf(s *marquee.Site) int64 { return int64(math.Round(s.RevenueShare * 1e6)) }

// CreateSite stores a new site; a name taken is a KindConflict error.
func (s *Store) CreateSite(ctx context.Context, in marquee.Site) (marquee.Site, error) {
	return write(ctx, s, "create site", func(tx Tx, now time.Time) (marquee.Site, error) {
		domains, err := json.Marshal(in.Domains)
		if err != nil {
			return in, err
		}
		var one int
		switch err := tx.QueryRow(ctx, `SELECT 1 FROM sites WHERE name = ?`, in.Name).Scan(&one); {
		case err == nil:
			return in, marquee.Errorf(marquee.KindConflict, "a site named %q exists already", in.Name)
		case !errors.Is(err, ErrNoRows):
			return in, err
		}
		in.CreatedAt, in.UpdatedAt = now, now
		if _, err := tx.Exec(ctx, `UPDATE seller_seq SET last = last + 1 WHERE id = 1`); err != nil {
			return in, err
		}
		var seller int64
		if err := tx.QueryRow(ctx, `SELECT last FROM seller_seq WHERE id = 1`).Scan(&seller); err != nil {
			return in, err
		}
		in.SellerID = strconv.FormatInt(seller, 10)
		in.AdsTxt, in.QualityAlarm = nil, nil // checked once it is made
		if _, err = tx.Exec(ctx, `INSERT INTO sites (`+siteCols+`) VALUES (?, ?, ?, ?, ?, ?, '', ?, '', ?, ?, ?)`, in.Name, string(domains), shareOf(&in),
			seller, string(in.SellerType), boolInt(in.Confidential), boolInt(in.Quarantined), boolInt(in.ChildDirected), now.UnixMilli(), now.UnixMilli()); err != nil {
			return in, err
		}
		return in, withChange(tx, nil, in).LogChange(ctx, marquee.EntitySite, 0, in.Name, marquee.OpPut)
	})
}

// Site returns site name, or marquee.NoSite.
func (s *Store) Site(ctx context.Context, name string) (marquee.Site, error) {
	return withDB(ctx, s, "get site", func(db DB) (marquee.Site, error) {
		st, err := scanSite(db.QueryRow(ctx, `SELECT `+siteCols+` FROM sites WHERE name = ?`, name))
		if errors.Is(err, ErrNoRows) {
			return st, marquee.NoSite(name)
		}
		return st, err
	})
}

// ListSites returns every site, by name.
func (s *Store) ListSites(ctx context.Context) ([]marquee.Site, error) {
	return withDB(ctx, s, "list sites", func(db DB) ([]marquee.Site, error) {
		return query(ctx, db, func(r Rows) (marquee.Site, error) { return scanSite(r) }, `SELECT `+siteCols+` FROM sites ORDER BY name`)
	})
}

// ReplaceSite replaces the domains, revenue share, seller type,
// confidentiality and quarantine of site name (in's name and seller id are ignored: a
// site's name is its placements', its seller id buyers').
func (s *Store) ReplaceSite(ctx context.Context, name string, in marquee.Site) (marquee.Site, error) {
	return write(ctx, s, "replace site", func(tx Tx, now time.Time) (marquee.Site, error) {
		old, err := scanSite(tx.QueryRow(ctx, `SELECT `+siteCols+` FROM sites WHERE name = ?`+s.cfg.ForUpdate, name))
		if errors.Is(err, ErrNoRows) {
			return in, marquee.NoSite(name)
		}
		if err != nil {
			return in, err
		}
		domains, err := json.Marshal(in.Domains)
		if err != nil {
			return in, err
		}
		in.Name, in.SellerID, in.AdsTxt, in.QualityAlarm, in.CreatedAt, in.UpdatedAt = name, old.SellerID, old.AdsTxt, old.QualityAlarm, old.CreatedAt, now
		if _, err = tx.Exec(ctx, `UPDATE sites SET domains = ?, revenue_share = ?, seller_type = ?, confidential = ?, quarantined = ?, child_directed = ?, updated_at = ? WHERE name = ?`,
			string(domains), shareOf(&in), string(in.SellerType), boolInt(in.Confidential), boolInt(in.Quarantined), boolInt(in.ChildDirected), now.UnixMilli(), name); err != nil {
			return in, err
		}
		return in, withChange(tx, old, in).LogChange(ctx, marquee.EntitySite, 0, name, marquee.OpPut)
	})
}

// DeleteSite deletes site name (its placements keep naming it; without a
// site, no revenue is its publisher's: no share was agreed).
func (s *Store) DeleteSite(ctx context.Context, name string) error {
	return exec(ctx, s, "delete site", func(tx Tx, now time.Time) error {
		old, err := scanSite(tx.QueryRow(ctx, `SELECT `+siteCols+` FROM sites WHERE name = ?`+s.cfg.ForUpdate, name))
		if errors.Is(err, ErrNoRows) {
			return marquee.NoSite(name)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM sites WHERE name = ?`, name); err != nil {
			return err
		}
		return withChange(tx, old, nil).LogChange(ctx, marquee.EntitySite, 0, name, marquee.OpDelete)
	})
}

// ClaimAdsTxtCheck claims site name's ads.txt check for this instance at
// now, unless one was claimed less than since ago (then false): one
// instance checks a site each period.
func (s *Store) ClaimAdsTxtCheck(ctx context.Context, name string, now time.Time, since time.Duration) (bool, error) {
	return write(ctx, s, "claim an ads.txt check", func(tx Tx, _ time.Time) (bool, error) {
		n, err := tx.Exec(ctx, `UPDATE sites SET ads_txt_claim = ? WHERE name = ? AND ads_txt_claim <= ?`, now.UnixMilli(), name, now.Add(-since).UnixMilli())
		return n == 1, err
	})
}

// SetAdsTxtCheck stores site name's last ads.txt check (a change every
// instance applies, not audited: no one changed the site). A site deleted since is marquee.NoSite.
func (s *Store) SetAdsTxtCheck(ctx context.Context, name string, c marquee.AdsTxtCheck) error {
	doc, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return exec(ctx, s, "store an ads.txt check", func(tx Tx, _ time.Time) error {
		n, err := tx.Exec(ctx, `UPDATE sites SET ads_txt = ? WHERE name = ?`, string(doc), name)
		if err == nil && n == 0 {
			err = marquee.NoSite(name)
		}
		if err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntitySite, 0, name, marquee.OpPut) // serving reads whether it is authorised
	})
}

// ClaimQualityCheck claims the judgement of site name's hour (its start)
// for this instance, unless that hour or a later one was claimed (then
// false): one instance judges a site's hour whatever the instances.
func (s *Store) ClaimQualityCheck(ctx context.Context, name string, hour time.Time) (bool, error) {
	return write(ctx, s, "claim a quality check", func(tx Tx, _ time.Time) (bool, error) {
		n, err := tx.Exec(ctx, `UPDATE sites SET quality_claim = ? WHERE name = ? AND quality_claim < ?`, hour.UnixMilli(), name, hour.UnixMilli())
		return n == 1, err
	})
}

// SetQualityAlarm stores site name's last quality alarm (a change every
// instance applies, not audited: no one changed the site). A site
// deleted since is marquee.NoSite.
func (s *Store) SetQualityAlarm(ctx context.Context, name string, a marquee.QualityAlarm) error {
	doc, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return exec(ctx, s, "store a quality alarm", func(tx Tx, _ time.Time) error {
		n, err := tx.Exec(ctx, `UPDATE sites SET quality_alarm = ? WHERE name = ?`, string(doc), name)
		if err == nil && n == 0 {
			err = marquee.NoSite(name)
		}
		if err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntitySite, 0, name, marquee.OpPut)
	})
}
