package sqltx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"marquee"
)

// Demand partners: a row each, keyed by the partner's name, its terms
// one JSON document; each change logged in the changelog (every instance
// reloads its partners) and audited without the headers' values.

// partnerTerms is what a partner's terms column holds.
type partnerTerms struct {
	Endpoint      string            `json:"endpoint"`
	Formats       []string          `json:"formats"`
	TimeoutMS     int               `json:"timeoutMs"`
	QPS           int               `json:"qps,omitempty"`
	BidAdjustment float64           `json:"bidAdjustment"`
	Placements    []string          `json:"placements,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
	Gzip          bool              `json:"gzip,omitempty"`
	Test          bool              `json:"test,omitempty"`
}

func partnerTermsOf(p *marquee.DemandPartner) (string, error) {
	b, err := json.Marshal(partnerTerms{p.Endpoint, p.Formats, p.TimeoutMS, p.QPS, p.BidAdjustment, p.Placements, p.Headers, p.Gzip, p.Test})
	return string(b), err
}

func scanPartner(r Row) (marquee.DemandPartner, error) {
	var p marquee.DemandPartner
	var terms string
	var created, updated int64
	if err := r.Scan(&p.Name, &terms, &created, &updated); err != nil {
		return p, err
	}
	var t partnerTerms
	if err := json.Unmarshal([]byte(terms), &t); err != nil {
		return p, fmt.Errorf("demand partner %q: decode terms: %w", p.Name, err)
	}
	p.Endpoint, p.Formats, p.TimeoutMS, p.QPS, p.BidAdjustment, p.Placements, p.Headers, p.Gzip, p.Test =
		t.Endpoint, t.Formats, t.TimeoutMS, t.QPS, t.BidAdjustment, t.Placements, t.Headers, t.Gzip, t.Test
	p.HeaderNames = slices.Sorted(maps.Keys(p.Headers))
	p.CreatedAt, p.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return p, nil
}

const partnerCols = `name, terms, created_at, updated_at`

// CreateDemandPartner stores a new partner; a name taken is a
// KindConflict error.
func (s *Store) CreateDemandPartner(ctx context.Context, p marquee.DemandPartner) (marquee.DemandPartner, error) {
	return write(ctx, s, "create demand partner", func(tx Tx, now time.Time) (marquee.DemandPartner, error) {
		terms, err := partnerTermsOf(&p)
		if err != nil {
			return p, err
		}
		var one int
		switch err := tx.QueryRow(ctx, `SELECT 1 FROM demand_partners WHERE name = ?`, p.Name).Scan(&one); {
		case err == nil:
			return p, partnerTaken(p.Name)
		case !errors.Is(err, ErrNoRows):
			return p, err
		}
		p.CreatedAt, p.UpdatedAt = now, now
		if _, err := tx.Exec(ctx, `INSERT INTO demand_partners (`+partnerCols+`) VALUES (?, ?, ?, ?)`, p.Name, terms, now.UnixMilli(), now.UnixMilli()); err != nil {
			if s.cfg.Duplicate != nil && s.cfg.Duplicate(err) {
				return p, partnerTaken(p.Name)
			}
			return p, err
		}
		return p, withChange(tx, nil, p).LogChange(ctx, marquee.EntityDemandPartner, 0, p.Name, marquee.OpPut)
	})
}

func partnerTaken(name string) error {
	return marquee.Errorf(marquee.KindConflict, "a demand partner named %q exists already", name)
}

// DemandPartner returns partner name, or marquee.NoDemandPartner.
func (s *Store) DemandPartner(ctx context.Context, name string) (marquee.DemandPartner, error) {
	return withDB(ctx, s, "get demand partner", func(db DB) (marquee.DemandPartner, error) {
		p, err := scanPartner(db.QueryRow(ctx, `SELECT `+partnerCols+` FROM demand_partners WHERE name = ?`, name))
		if errors.Is(err, ErrNoRows) {
			return p, marquee.NoDemandPartner(name)
		}
		return p, err
	})
}

// ListDemandPartners returns every partner, by name (an install has
// tens).
func (s *Store) ListDemandPartners(ctx context.Context) ([]marquee.DemandPartner, error) {
	return withDB(ctx, s, "list demand partners", func(db DB) ([]marquee.DemandPartner, error) {
		return query(ctx, db, func(r Rows) (marquee.DemandPartner, error) { return scanPartner(r) }, `SELECT `+partnerCols+` FROM demand_partners ORDER BY name`)
	})
}

// ReplaceDemandPartner replaces the terms of partner name (p's name is
// ignored); keepHeaders keeps the stored headers (a body without them).
func (s *Store) ReplaceDemandPartner(ctx context.Context, name string, p marquee.DemandPartner, keepHeaders bool) (marquee.DemandPartner, error) {
	return write(ctx, s, "replace demand partner", func(tx Tx, now time.Time) (marquee.DemandPartner, error) {
		old, err := scanPartner(tx.QueryRow(ctx, `SELECT `+partnerCols+` FROM demand_partners WHERE name = ?`+s.cfg.ForUpdate, name))
		if errors.Is(err, ErrNoRows) {
			return p, marquee.NoDemandPartner(name)
		}
		if err != nil {
			return p, err
		}
		p.Name, p.CreatedAt, p.UpdatedAt = name, old.CreatedAt, now
		if keepHeaders {
			p.Headers, p.HeaderNames = old.Headers, old.HeaderNames
		}
		terms, err := partnerTermsOf(&p)
		if err != nil {
			return p, err
		}
		if _, err := tx.Exec(ctx, `UPDATE demand_partners SET terms = ?, updated_at = ? WHERE name = ?`, terms, now.UnixMilli(), name); err != nil {
			return p, err
		}
		return p, withChange(tx, old, p).LogChange(ctx, marquee.EntityDemandPartner, 0, name, marquee.OpPut)
	})
}

// DeleteDemandPartner deletes partner name: no request goes to it.
func (s *Store) DeleteDemandPartner(ctx context.Context, name string) error {
	return exec(ctx, s, "delete demand partner", func(tx Tx, now time.Time) error {
		old, err := scanPartner(tx.QueryRow(ctx, `SELECT `+partnerCols+` FROM demand_partners WHERE name = ?`+s.cfg.ForUpdate, name))
		if errors.Is(err, ErrNoRows) {
			return marquee.NoDemandPartner(name)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM demand_partners WHERE name = ?`, name); err != nil {
			return err
		}
		return withChange(tx, old, nil).LogChange(ctx, marquee.EntityDemandPartner, 0, name, marquee.OpDelete)
	})
}
