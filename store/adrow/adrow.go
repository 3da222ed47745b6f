// Package adrow is the row every SQL store keeps an ad in — times as unix
// milliseconds, conditions as JSON text — and the parallel decoding of many
// rows that loading a large catalog needs.
package adrow

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"time"

	gojson "github.com/goccy/go-json"

	"golang.org/x/sync/errgroup"

	"marquee"
)

// Columns are the row's columns in Row.Dest order.
const Columns = `id, title, start_at, end_at, conditions, created_at, updated_at, url, link_code, campaign_id, coalesce(creative, ''), placements, coalesce(targeting, ''), state, coalesce(review, '')`

// Row is an ads row as read, before its conditions are decoded.
type Row struct {
	ID                           int64
	Title, Conditions            string
	Start, End, Created, Updated int64
	URL, Link                    string // landing url, tracking link code
	Campaign                     int64  // 0: none
	Creative, Placements         string // JSON; "": none
	Targeting                    string // JSON; "": none
	State                        string // marquee.StateActive, StatePending or StateDraft
	Review                       string // JSON; "": none
}

// Dest returns the scan destinations of Columns.
func (r *Row) Dest() []any {
	return []any{&r.ID, &r.Title, &r.Start, &r.End, &r.Conditions, &r.Created, &r.Updated, &r.URL, &r.Link,
		&r.Campaign, &r.Creative, &r.Placements, &r.Targeting, &r.State, &r.Review}
}

// Ad decodes the row. Its JSON columns are decoded with goccy/go-json, a
// drop-in for encoding/json three times as fast here (BenchmarkRowAd:
// 19–20 µs → 5.4–6.5 µs a campaign's ad), which at 1,000,000 ads was
// most of a start's CPU; they are written with encoding/json.
func (r *Row) Ad() (marquee.Ad, error) {
	a := marquee.Ad{ID: r.ID, Title: r.Title,
		StartAt: time.UnixMilli(r.Start).UTC(), EndAt: time.UnixMilli(r.End).UTC(),
		CreatedAt: time.UnixMilli(r.Created).UTC(), UpdatedAt: time.UnixMilli(r.Updated).UTC(),
		URL: r.URL, Link: r.Link, CampaignID: r.Campaign}
	if err := gojson.Unmarshal([]byte(r.Conditions), &a.Conditions); err != nil {
		return a, fmt.Errorf("ad %d: decode conditions: %w", r.ID, err)
	}
	if r.Creative != "" {
		if err := gojson.Unmarshal([]byte(r.Creative), &a.Creative); err != nil {
			return a, fmt.Errorf("ad %d: decode creative: %w", r.ID, err)
		}
	}
	if r.Placements != "" {
		if err := gojson.Unmarshal([]byte(r.Placements), &a.Placements); err != nil {
			return a, fmt.Errorf("ad %d: decode placements: %w", r.ID, err)
		}
	}
	if r.Targeting != "" {
		if err := gojson.Unmarshal([]byte(r.Targeting), &a.Targeting); err != nil {
			return a, fmt.Errorf("ad %d: decode targeting: %w", r.ID, err)
		}
	}
	if r.Campaign != 0 { // approval is of campaigns' ads
		a.State = r.State
	}
	if r.Review != "" {
		a.Review = new(marquee.Review)
		if err := gojson.Unmarshal([]byte(r.Review), a.Review); err != nil {
			return a, fmt.Errorf("ad %d: decode review: %w", r.ID, err)
		}
	}
	return a, nil
}

// Conditions encodes an ad's conditions for the conditions column.
func Conditions(in marquee.AdInput) (string, error) {
	b, err := json.Marshal(in.Conditions)
	return string(b), err
}

// Extras are an ad's columns beyond the contract's, encoded: Creative
// and Targeting nil (NULL) without one, Placements "" without any.
type Extras struct {
	Creative   any
	Placements string
	Targeting  any
}

// ExtrasOf encodes an ad's creative, placements and targeting for their
// columns.
func ExtrasOf(in marquee.AdInput) (Extras, error) {
	var x Extras
	if in.Creative != nil {
		b, err := json.Marshal(in.Creative)
		if err != nil {
			return x, err
		}
		x.Creative = string(b)
	}
	if len(in.Placements) > 0 {
		b, err := json.Marshal(in.Placements)
		if err != nil {
			return x, err
		}
		x.Placements = string(b)
	}
	if in.Targeting != nil {
		b, err := json.Marshal(in.Targeting)
		if err != nil {
			return x, err
		}
		x.Targeting = string(b)
	}
	return x, nil
}

// batchSize is how many rows a decoder takes at a time.
const batchSize = 1024

// Each calls fn for every row that scan yields, decoded. scan runs in one
// goroutine and reads rows; GOMAXPROCS goroutines decode them (decoding
// conditions is most of the cost of loading a large catalog), so fn is
// called from several goroutines at once, in no particular order. It stops
// at the first error.
func Each(ctx context.Context, scan func(ctx context.Context, yield func(Row) error) error, fn func(*marquee.Ad) error) error {
	g, ctx := errgroup.WithContext(ctx)
	batches := make(chan []Row, runtime.GOMAXPROCS(0))
	g.Go(func() error {
		defer close(batches)
		batch := make([]Row, 0, batchSize)
		err := scan(ctx, func(r Row) error {
			if batch = append(batch, r); len(batch) == batchSize {
				select {
				case batches <- batch:
				case <-ctx.Done():
					return ctx.Err()
				}
				batch = make([]Row, 0, batchSize)
			}
			return nil
		})
		if err != nil {
			return err
		}
		batches <- batch
		return nil
	})
	for range runtime.GOMAXPROCS(0) {
		g.Go(func() error {
			for batch := range batches {
				for i := range batch {
					a, err := batch[i].Ad()
					if err != nil {
						return err
					}
					if err := fn(&a); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// Rows is what the drivers' result sets provide (*sql.Rows, pgx.Rows).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Yield scans every row of rows (selected as Columns) and passes it to
// yield, stopping at the first error.
func Yield(rows Rows, yield func(Row) error) error {
	for rows.Next() {
		var r Row
		if err := rows.Scan(r.Dest()...); err != nil {
			return err
		}
		if err := yield(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Collect decodes every row of rows (selected as Columns).
func Collect(rows Rows) ([]marquee.Ad, error) {
	ads := []marquee.Ad{}
	err := Yield(rows, func(r Row) error {
		a, err := r.Ad()
		ads = append(ads, a)
		return err
	})
	return ads, err
}
