package sqltx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"marquee"
)

// Deals: a row each, keyed by the deal's id, its terms one JSON
// document; each change logged in the changelog (every instance reloads
// its deals) and audited.

// dealTerms is what a deal's terms column holds.
type dealTerms struct {
	Name         string         `json:"name"`
	Bidders      []string       `json:"bidders"`
	Floor        marquee.Micros `json:"floor"`
	Tier         string         `json:"tier"`
	ClientBids   bool           `json:"clientBids,omitempty"`
	AdvertiserID int64          `json:"advertiserId,omitempty"`
	StartAt      *time.Time     `json:"startAt,omitempty"`
	EndAt        *time.Time     `json:"endAt,omitempty"`
}

func termsOf(d *marquee.Deal) (string, error) {
	b, err := json.Marshal(dealTerms{d.Name, d.Bidders, d.Floor, d.Tier, d.ClientBids, d.AdvertiserID, d.StartAt, d.EndAt})
	return string(b), err
}

func scanDeal(r Row) (marquee.Deal, error) {
	var d marquee.Deal
	var terms string
	var created, updated int64
	if err := r.Scan(&d.ID, &terms, &created, &updated); err != nil {
		return d, err
	}
	var t dealTerms
	if err := json.Unmarshal([]byte(terms), &t); err != nil {
		return d, fmt.Errorf("deal %q: decode terms: %w", d.ID, err)
	}
	d.Name, d.Bidders, d.Floor, d.Tier, d.ClientBids, d.AdvertiserID, d.StartAt, d.EndAt = t.Name, t.Bidders, t.Floor, t.Tier, t.ClientBids, t.AdvertiserID, t.StartAt, t.EndAt
	d.CreatedAt, d.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return d, nil
}

const dealCols = `id, terms, created_at, updated_at`

// CreateDeal stores a new deal; an id taken is a KindConflict error.
func (s *Store) CreateDeal(ctx context.Context, d marquee.Deal) (marquee.Deal, error) {
	return write(ctx, s, "create deal", func(tx Tx, now time.Time) (marquee.Deal, error) {
		terms, err := termsOf(&d)
		if err != nil {
			return d, err
		}
		var one int
		switch err := tx.QueryRow(ctx, `SELECT 1 FROM deals WHERE id = ?`, d.ID).Scan(&one); {
		case err == nil:
			return d, dealTaken(d.ID)
		case !errors.Is(err, ErrNoRows):
			return d, err
		}
		d.CreatedAt, d.UpdatedAt = now, now
		if _, err := tx.Exec(ctx, `INSERT INTO deals (`+dealCols+`) VALUES (?, ?, ?, ?)`, d.ID, terms, now.UnixMilli(), now.UnixMilli()); err != nil {
			if s.cfg.Duplicate != nil && s.cfg.Duplicate(err) {
				return d, dealTaken(d.ID)
			}
			return d, err
		}
		return d, withChange(tx, nil, d).LogChange(ctx, marquee.EntityDeal, 0, d.ID, marquee.OpPut)
	})
}

func dealTaken(id string) error {
	return marquee.Errorf(marquee.KindConflict, "a deal with id %q exists already", id)
}

// Deal returns deal id, or marquee.NoDeal.
func (s *Store) Deal(ctx context.Context, id string) (marquee.Deal, error) {
	return withDB(ctx, s, "get deal", func(db DB) (marquee.Deal, error) {
		d, err := scanDeal(db.QueryRow(ctx, `SELECT `+dealCols+` FROM deals WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return d, marquee.NoDeal(id)
		}
		return d, err
	})
}

// ListDeals returns every deal, by id (an install has tens, not
// thousands).
func (s *Store) ListDeals(ctx context.Context) ([]marquee.Deal, error) {
	return withDB(ctx, s, "list deals", func(db DB) ([]marquee.Deal, error) {
		return query(ctx, db, func(r Rows) (marquee.Deal, error) { return scanDeal(r) }, `SELECT `+dealCols+` FROM deals ORDER BY id`)
	})
}

// ReplaceDeal replaces the terms of deal id (d's id is ignored).
func (s *Store) ReplaceDeal(ctx context.Context, id string, d marquee.Deal) (marquee.Deal, error) {
	return write(ctx, s, "replace deal", func(tx Tx, now time.Time) (marquee.Deal, error) {
		old, err := scanDeal(tx.QueryRow(ctx, `SELECT `+dealCols+` FROM deals WHERE id = ?`+s.cfg.ForUpdate, id))
		if errors.Is(err, ErrNoRows) {
			return d, marquee.NoDeal(id)
		}
		if err != nil {
			return d, err
		}
		d.ID, d.CreatedAt, d.UpdatedAt = id, old.CreatedAt, now
		terms, err := termsOf(&d)
		if err != nil {
			return d, err
		}
		if _, err := tx.Exec(ctx, `UPDATE deals SET terms = ?, updated_at = ? WHERE id = ?`, terms, now.UnixMilli(), id); err != nil {
			return d, err
		}
		return d, withChange(tx, old, d).LogChange(ctx, marquee.EntityDeal, 0, id, marquee.OpPut)
	})
}

// DeleteDeal deletes deal id: bids naming it compete in the open auction.
func (s *Store) DeleteDeal(ctx context.Context, id string) error {
	return exec(ctx, s, "delete deal", func(tx Tx, now time.Time) error {
		old, err := scanDeal(tx.QueryRow(ctx, `SELECT `+dealCols+` FROM deals WHERE id = ?`+s.cfg.ForUpdate, id))
		if errors.Is(err, ErrNoRows) {
			return marquee.NoDeal(id)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM deals WHERE id = ?`, id); err != nil {
			return err
		}
		return withChange(tx, old, nil).LogChange(ctx, marquee.EntityDeal, 0, id, marquee.OpDelete)
	})
}
