package sqltx

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// Advertisers, campaigns and placements: rows of their own tables, each
// change logged in the changelog (other instances drop what they cache
// of them) and audited.

const advertiserCols = `id, name, notes, state, settings, created_at, updated_at, conversion_nonce, credited_micros`

func scanAdvertiser(r Row) (marquee.Advertiser, error) {
	var a marquee.Advertiser
	var created, updated, credited int64
	var settings *string // NULL: none (rows before 0020)
	if err := r.Scan(&a.ID, &a.Name, &a.Notes, &a.State, &settings, &created, &updated, &a.ConversionNonce, &credited); err != nil {
		return a, err
	}
	a.Credited = marquee.Micros(credited)
	a.CreatedAt, a.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	if settings != nil && *settings != "" {
		if err := json.Unmarshal([]byte(*settings), &a.AdvertiserSettings); err != nil {
			return a, fmt.Errorf("advertiser %d: decode settings: %w", a.ID, err)
		}
	}
	return a, nil
}

// advertiserSettings is what a store keeps of in's settings: NULL when
// it sets none.
func advertiserSettings(in marquee.AdvertiserInput) (any, error) {
	if in.AdvertiserSettings == (marquee.AdvertiserSettings{}) {
		return nil, nil
	}
	b, err := json.Marshal(in.AdvertiserSettings)
	return string(b), err
}

// nameTaken is the conflict of an active advertiser's name.
func nameTaken(name string) error {
	return marquee.Errorf(marquee.KindConflict, "an active advertiser is named %q already", name)
}

// CreateAdvertiser stores a new active advertiser; a name an active one
// has is a KindConflict error.
func (s *Store) CreateAdvertiser(ctx context.Context, in marquee.AdvertiserInput) (marquee.Advertiser, error) {
	return write(ctx, s, "create advertiser", func(tx Tx, now time.Time) (marquee.Advertiser, error) {
		a := marquee.Advertiser{Name: in.Name, Notes: in.Notes, State: marquee.StateActive, AdvertiserSettings: in.AdvertiserSettings, CreatedAt: now, UpdatedAt: now}
		settings, err := advertiserSettings(in)
		if err != nil {
			return a, err
		}
		a.ID, err = s.insertID(ctx, tx, `INSERT INTO advertisers (name, active_name, notes, state, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			"active_name", in.Name, in.Name, in.Notes, a.State, settings, now.UnixMilli(), now.UnixMilli())
		if errors.Is(err, errDuplicate) {
			return a, nameTaken(in.Name)
		}
		if err != nil {
			return a, err
		}
		return a, tx.LogChange(ctx, marquee.EntityAdvertiser, a.ID, "", marquee.OpPut)
	})
}

// Advertiser returns advertiser id, or marquee.NoAdvertiser.
func (s *Store) Advertiser(ctx context.Context, id int64) (marquee.Advertiser, error) {
	return withDB(ctx, s, "get advertiser", func(db DB) (marquee.Advertiser, error) {
		a, err := scanAdvertiser(db.QueryRow(ctx, `SELECT `+advertiserCols+` FROM advertisers WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return a, marquee.NoAdvertiser(id)
		}
		return a, err
	})
}

// ReplaceAdvertiser replaces the name and notes of advertiser id. An
// archived advertiser can be renamed to a name an active one has.
func (s *Store) ReplaceAdvertiser(ctx context.Context, id int64, in marquee.AdvertiserInput) (marquee.Advertiser, error) {
	return write(ctx, s, "replace advertiser", func(tx Tx, now time.Time) (marquee.Advertiser, error) {
		a, err := scanAdvertiser(tx.QueryRow(ctx, `SELECT `+advertiserCols+` FROM advertisers WHERE id = ?`+s.cfg.ForUpdate, id))
		if errors.Is(err, ErrNoRows) {
			return a, marquee.NoAdvertiser(id)
		}
		if err != nil {
			return a, err
		}
		if in.Prepaid != a.Prepaid {
			return a, marquee.Invalid("invalid advertiser", marquee.Problems{"prepaid": fmt.Sprintf(
				"is chosen when an advertiser is created (this one's is %t): its balance is what it paid less all it spent, so its spend cannot be split between invoices and a balance", a.Prepaid)})
		}
		var active any // NULL once archived
		if a.State == marquee.StateActive {
			active = in.Name
		}
		settings, err := advertiserSettings(in)
		if err != nil {
			return a, err
		}
		n, err := tx.Exec(ctx, `UPDATE advertisers SET name = ?, active_name = ?, notes = ?, settings = ?, updated_at = ?
			WHERE id = ? AND NOT EXISTS (SELECT 1 FROM advertisers o WHERE o.active_name = ? AND o.id <> ?)`,
			in.Name, active, in.Notes, settings, now.UnixMilli(), id, active, id)
		if err != nil {
			return a, err
		}
		if n == 0 {
			return a, nameTaken(in.Name)
		}
		a.Name, a.Notes, a.AdvertiserSettings, a.UpdatedAt = in.Name, in.Notes, in.AdvertiserSettings, now
		return a, tx.LogChange(ctx, marquee.EntityAdvertiser, id, "", marquee.OpPut)
	})
}

// SetConversionNonce gives advertiser id a new conversion secret: the
// nonce it is derived from (tracking.Signer.ConversionSecret). Pixels
// signed with the one before stop verifying once every instance applied
// the change.
func (s *Store) SetConversionNonce(ctx context.Context, id int64, nonce string) error {
	return exec(ctx, s, "set conversion secret", func(tx Tx, now time.Time) error {
		n, err := tx.Exec(ctx, `UPDATE advertisers SET conversion_nonce = ?, updated_at = ? WHERE id = ?`, nonce, now.UnixMilli(), id)
		if err != nil {
			return err
		}
		if n == 0 {
			return marquee.NoAdvertiser(id)
		}
		return tx.LogChange(ctx, marquee.EntityAdvertiser, id, "", marquee.OpPut)
	})
}

// ArchiveAdvertiser archives advertiser id: it is kept (its reports
// stay) and its name is free. An advertiser with a campaign that is not
// archived is a KindConflict error naming them.
func (s *Store) ArchiveAdvertiser(ctx context.Context, id int64) error {
	return exec(ctx, s, "archive advertiser", func(tx Tx, now time.Time) error {
		var state string
		err := tx.QueryRow(ctx, `SELECT state FROM advertisers WHERE id = ?`+s.cfg.ForUpdate, id).Scan(&state)
		if errors.Is(err, ErrNoRows) {
			return marquee.NoAdvertiser(id)
		}
		if err != nil {
			return err
		}
		live, err := query(ctx, tx, func(r Rows) (int64, error) { var c int64; return c, r.Scan(&c) },
			`SELECT id FROM campaigns WHERE advertiser_id = ? AND state <> ? ORDER BY id LIMIT 10`, id, marquee.StateArchived)
		if err != nil {
			return err
		}
		if len(live) > 0 {
			return marquee.Errorf(marquee.KindConflict, "advertiser %d has campaigns that are not archived (%s): archive them first", id, joinIDs(live))
		}
		if _, err := tx.Exec(ctx, `UPDATE advertisers SET state = ?, active_name = NULL, updated_at = ? WHERE id = ?`,
			marquee.StateArchived, now.UnixMilli(), id); err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntityAdvertiser, id, "", marquee.OpPut)
	})
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// ListAdvertisers returns a page of the advertisers in state ("" for
// every one) whose names start with query (any case), by name, and how
// many there are.
func (s *Store) ListAdvertisers(ctx context.Context, f marquee.ListFilter) ([]marquee.Advertiser, int, error) {
	where, args := listWhere(f, "name")
	var total int
	list, err := withDB(ctx, s, "list advertisers", func(db DB) ([]marquee.Advertiser, error) {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM advertisers`+where, args...).Scan(&total); err != nil {
			return nil, err
		}
		return query(ctx, db, func(r Rows) (marquee.Advertiser, error) { return scanAdvertiser(r) },
			`SELECT `+advertiserCols+` FROM advertisers`+where+` ORDER BY lower(name), id LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	})
	return list, total, err
}

// listWhere is the WHERE clause of a ListFilter over a table whose name
// column is name.
func listWhere(f marquee.ListFilter, name string) (string, []any) {
	var conds []string
	var args []any
	if f.State != "" {
		conds, args = append(conds, `state = ?`), append(args, f.State)
	}
	if f.Query != "" {
		// A prefix of the lower-cased name; LIKE's wildcards escaped.
		q := likeEscaper.Replace(strings.ToLower(f.Query))
		conds, args = append(conds, `lower(`+name+`) LIKE ? ESCAPE '!'`), append(args, q+"%")
	}
	if f.Parent != 0 {
		conds, args = append(conds, `advertiser_id = ?`), append(args, f.Parent)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return ` WHERE ` + strings.Join(conds, ` AND `), args
}

const campaignCols = `id, advertiser_id, name, state, review, start_at, end_at, priority, weight, settings, created_at, updated_at`

func scanCampaign(r Row) (marquee.Campaign, error) {
	var c marquee.Campaign
	var start, end, created, updated int64
	var settings string
	var review *string // NULL: none (and rows before 0021)
	if err := r.Scan(&c.ID, &c.AdvertiserID, &c.Name, &c.State, &review, &start, &end, &c.Priority, &c.Weight, &settings, &created, &updated); err != nil {
		return c, err
	}
	if review != nil && *review != "" {
		c.Review = new(marquee.Review)
		if err := json.Unmarshal([]byte(*review), c.Review); err != nil {
			return c, fmt.Errorf("campaign %d: decode review: %w", c.ID, err)
		}
	}
	c.StartAt, c.EndAt = time.UnixMilli(start).UTC(), time.UnixMilli(end).UTC()
	c.CreatedAt, c.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	var set marquee.CampaignSettings
	if err := json.Unmarshal([]byte(settings), &set); err != nil {
		return c, fmt.Errorf("campaign %d: decode settings: %w", c.ID, err)
	}
	c.SetSettings(set)
	return c, nil
}

// checkAdvertiser refuses (400 naming advertiserId) a campaign of an
// advertiser that does not exist or is archived, and (naming
// price.model) a flat fee of a prepaid advertiser's: a balance pays for
// events, as they are billed; a flat fee is agreed and invoiced.
func checkAdvertiser(ctx context.Context, tx Tx, in *marquee.CampaignInput) error {
	a, err := scanAdvertiser(tx.QueryRow(ctx, `SELECT `+advertiserCols+` FROM advertisers WHERE id = ?`, in.AdvertiserID))
	switch {
	case errors.Is(err, ErrNoRows):
		return marquee.Invalid("invalid campaign", marquee.Problems{"advertiserId": fmt.Sprintf("no advertiser %d", in.AdvertiserID)})
	case err != nil:
		return err
	case a.State != marquee.StateActive:
		return marquee.Invalid("invalid campaign", marquee.Problems{"advertiserId": fmt.Sprintf("advertiser %d is archived", in.AdvertiserID)})
	case a.Prepaid && in.Price != nil && in.Price.Flat():
		return marquee.Invalid("invalid campaign", marquee.Problems{"price.model": fmt.Sprintf(
			"advertiser %d is prepaid: its balance pays for events as they are billed (cpm, vcpm, cpc, cpa), not a flat fee", in.AdvertiserID)})
	}
	return nil
}

// CreateCampaign stores a new campaign of an active advertiser, in state
// (a draft, from the API; a seed's are active, approved as they are made:
// their review says so, by the audit's actor).
func (s *Store) CreateCampaign(ctx context.Context, in marquee.CampaignInput, state string) (marquee.Campaign, error) {
	return write(ctx, s, "create campaign", func(tx Tx, now time.Time) (marquee.Campaign, error) {
		c := marquee.Campaign{State: state, CampaignInput: in, CreatedAt: now, UpdatedAt: now}
		if err := checkAdvertiser(ctx, tx, &in); err != nil {
			return c, err
		}
		if state == marquee.StateDraft || state == marquee.StatePending {
			// The advertiser's row is the lock its creations take turns on.
			var id, n int64
			if err := tx.QueryRow(ctx, `SELECT id FROM advertisers WHERE id = ?`+s.cfg.ForUpdate, in.AdvertiserID).Scan(&id); err != nil {
				return c, err
			}
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM campaigns WHERE advertiser_id = ? AND state IN (?, ?)`,
				in.AdvertiserID, marquee.StateDraft, marquee.StatePending).Scan(&n); err != nil {
				return c, err
			}
			if n >= marquee.MaxUnapproved {
				return c, marquee.Errorf(marquee.KindConflict, "advertiser %d has %d campaigns in draft or pending, the most it may: submit and approve, or archive, some first",
					in.AdvertiserID, n)
			}
		}
		settings, err := json.Marshal(in.Settings())
		if err != nil {
			return c, err
		}
		var review any // NULL: not approved
		if state == marquee.StateActive {
			a, _ := marquee.AuditFrom(ctx)
			c.Review = &marquee.Review{Action: marquee.ActionApprove, By: cmp.Or(a.Actor, "seed"), At: now}
			b, err := json.Marshal(c.Review)
			if err != nil {
				return c, err
			}
			review = string(b)
		}
		c.ID, err = s.insertID(ctx, tx, `INSERT INTO campaigns (advertiser_id, name, state, start_at, end_at, priority, weight, settings, review, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, "", in.AdvertiserID, in.Name, c.State, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(),
			in.Priority, in.Weight, string(settings), review, now.UnixMilli(), now.UnixMilli())
		if err != nil {
			return c, err
		}
		return c, tx.LogChange(ctx, marquee.EntityCampaign, c.ID, "", marquee.OpPut)
	})
}

// Campaign returns campaign id, or marquee.NoCampaign.
func (s *Store) Campaign(ctx context.Context, id int64) (marquee.Campaign, error) {
	return withDB(ctx, s, "get campaign", func(db DB) (marquee.Campaign, error) {
		c, err := scanCampaign(db.QueryRow(ctx, `SELECT `+campaignCols+` FROM campaigns WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return c, marquee.NoCampaign(id)
		}
		return c, err
	})
}

// lockCampaign reads campaign id for a change.
func (s *Store) lockCampaign(ctx context.Context, tx Tx, id int64) (marquee.Campaign, error) {
	c, err := scanCampaign(tx.QueryRow(ctx, `SELECT `+campaignCols+` FROM campaigns WHERE id = ?`+s.cfg.ForUpdate, id))
	if errors.Is(err, ErrNoRows) {
		return c, marquee.NoCampaign(id)
	}
	return c, err
}

// ReplaceCampaign replaces what a client sets of campaign id (its state
// stays). An archived campaign cannot be changed.
func (s *Store) ReplaceCampaign(ctx context.Context, id int64, in marquee.CampaignInput) (marquee.Campaign, error) {
	return write(ctx, s, "replace campaign", func(tx Tx, now time.Time) (marquee.Campaign, error) {
		c, err := s.lockCampaign(ctx, tx, id)
		if err != nil {
			return c, err
		}
		if c.State == marquee.StateArchived {
			return c, marquee.Errorf(marquee.KindConflict, "campaign %d is archived", id)
		}
		if err := checkAdvertiser(ctx, tx, &in); err != nil {
			return c, err
		}
		settings, err := json.Marshal(in.Settings())
		if err != nil {
			return c, err
		}
		if _, err := tx.Exec(ctx, `UPDATE campaigns SET advertiser_id = ?, name = ?, start_at = ?, end_at = ?, priority = ?, weight = ?,
			settings = ?, updated_at = ? WHERE id = ?`, in.AdvertiserID, in.Name, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(),
			in.Priority, in.Weight, string(settings), now.UnixMilli(), id); err != nil {
			return c, err
		}
		c.CampaignInput, c.UpdatedAt = in, now
		return c, tx.LogChange(ctx, marquee.EntityCampaign, id, "", marquee.OpPut)
	})
}

// MoveCampaign takes action (one of marquee.Moves) on campaign id's
// state, checked against its state under the row's lock: a move its state
// does not allow is a KindConflict error, one to the state it is in
// changes nothing. Submit, approve and reject record the campaign's review
// (by the audit's actor, with reason, a rejection's); approving or
// resuming one whose advertiser is archived is a KindConflict error.
func (s *Store) MoveCampaign(ctx context.Context, id int64, action, reason string) (marquee.Campaign, error) {
	m, ok := marquee.Moves[action]
	if !ok {
		return marquee.Campaign{}, fmt.Errorf("move campaign %d: no action %q", id, action)
	}
	return write(ctx, s, "change campaign state", func(tx Tx, now time.Time) (marquee.Campaign, error) {
		c, err := s.lockCampaign(ctx, tx, id)
		if err != nil {
			return c, err
		}
		if err := m.Check(id, c.State); err != nil || c.State == m.To {
			return c, err
		}
		if m.To == marquee.StateActive {
			if err := checkAdvertiser(ctx, tx, &c.CampaignInput); err != nil {
				if marquee.KindOf(err) != marquee.KindInvalid {
					return c, err
				}
				why := "its advertiser " + strconv.FormatInt(c.AdvertiserID, 10) + " is archived"
				if p := marquee.AsError(err).Problems["price.model"]; p != "" {
					why = "price.model: " + p
				}
				return c, marquee.Errorf(marquee.KindConflict, "campaign %d cannot %s: %s", id, action, why)
			}
		}
		review := c.Review
		if action == marquee.ActionSubmit || action == marquee.ActionApprove || action == marquee.ActionReject {
			a, _ := marquee.AuditFrom(ctx)
			review = &marquee.Review{Action: action, Reason: reason, By: cmp.Or(a.Actor, "anonymous"), At: now}
		}
		var doc any // NULL without a review
		if review != nil {
			b, err := json.Marshal(review)
			if err != nil {
				return c, err
			}
			doc = string(b)
		}
		if _, err := tx.Exec(ctx, `UPDATE campaigns SET state = ?, review = ?, updated_at = ? WHERE id = ?`, m.To, doc, now.UnixMilli(), id); err != nil {
			return c, err
		}
		c.State, c.Review, c.UpdatedAt = m.To, review, now
		return c, tx.LogChange(ctx, marquee.EntityCampaign, id, "", marquee.OpPut)
	})
}

// ListCampaigns returns a page of campaigns (of f.Parent, an advertiser,
// when set; in f.State when set; whose names start with f.Query), by
// name, and how many there are.
func (s *Store) ListCampaigns(ctx context.Context, f marquee.ListFilter) ([]marquee.Campaign, int, error) {
	where, args := listWhere(f, "name")
	var total int
	list, err := withDB(ctx, s, "list campaigns", func(db DB) ([]marquee.Campaign, error) {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM campaigns`+where, args...).Scan(&total); err != nil {
			return nil, err
		}
		return query(ctx, db, func(r Rows) (marquee.Campaign, error) { return scanCampaign(r) },
			`SELECT `+campaignCols+` FROM campaigns`+where+` ORDER BY lower(name), id LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	})
	return list, total, err
}

// LiveCampaigns returns every campaign that is not archived, by id, in one
// read: what serving plans from (delivery.Engine.Load). Not ListCampaigns
// page by page: its order by name sorts the whole table for every page,
// which at 100,000 campaigns took a start-up half a minute.
func (s *Store) LiveCampaigns(ctx context.Context) ([]marquee.Campaign, error) {
	return withDB(ctx, s, "load campaigns", func(db DB) ([]marquee.Campaign, error) {
		return query(ctx, db, func(r Rows) (marquee.Campaign, error) { return scanCampaign(r) },
			`SELECT `+campaignCols+` FROM campaigns WHERE state <> ? ORDER BY id`, marquee.StateArchived)
	})
}

const placementCols = `id, name, site, sizes, types, default_ad_id, coalesce(passback, ''), floor, expected_daily_requests, created_at, updated_at,
	coalesce(ad_breaks, ''), max_duration_ms, render_proof, child_directed`

func scanPlacement(r Row) (marquee.Placement, error) {
	var p marquee.Placement
	var sizes, types, breaks string
	var created, updated, proof, child int64
	if err := r.Scan(&p.ID, &p.Name, &p.Site, &sizes, &types, &p.DefaultAdID, &p.Passback, &p.Floor, &p.ExpectedDailyRequests, &created, &updated, &breaks, &p.MaxDurationMs, &proof, &child); err != nil {
		return p, err
	}
	p.RenderProof, p.ChildDirected = proof != 0, child != 0
	if breaks != "" {
		if err := json.Unmarshal([]byte(breaks), &p.AdBreaks); err != nil {
			return p, fmt.Errorf("placement %s: decode ad breaks: %w", p.Name, err)
		}
	}
	p.CreatedAt, p.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	if err := json.Unmarshal([]byte(sizes), &p.Sizes); err != nil {
		return p, fmt.Errorf("placement %s: decode sizes: %w", p.Name, err)
	}
	if err := json.Unmarshal([]byte(types), &p.Types); err != nil {
		return p, fmt.Errorf("placement %s: decode types: %w", p.Name, err)
	}
	return p, nil
}

// checkDefaultAd refuses (400) a default ad that does not exist or has no
// creative (it fills a slot with its creative).
func checkDefaultAd(ctx context.Context, tx Tx, id int64) error {
	if id == 0 {
		return nil
	}
	var n, creatives int
	if err := tx.QueryRow(ctx, `SELECT count(*), count(creative) FROM ads WHERE id = ?`, id).Scan(&n, &creatives); err != nil {
		return err
	}
	switch {
	case n == 0:
		return marquee.Invalid("invalid placement", marquee.Problems{"defaultAdId": fmt.Sprintf("no ad %d", id)})
	case creatives == 0:
		return marquee.Invalid("invalid placement", marquee.Problems{"defaultAdId": fmt.Sprintf("ad %d has no creative to fill a slot with", id)})
	}
	return nil
}

// adBreaksOf is what the ad_breaks column keeps of in: NULL without any.
func adBreaksOf(in marquee.PlacementInput) any {
	if len(in.AdBreaks) == 0 {
		return nil
	}
	b, _ := json.Marshal(in.AdBreaks)
	return string(b)
}

// passbackOf is what the passback column keeps of in: NULL without one.
func passbackOf(in marquee.PlacementInput) any {
	if in.Passback == "" {
		return nil
	}
	return in.Passback
}

func placementJSON(in marquee.PlacementInput) (sizes, types string) {
	s, _ := json.Marshal(append([]string{}, in.Sizes...))
	t, _ := json.Marshal(append([]string{}, in.Types...))
	return string(s), string(t)
}

// CreatePlacement stores a new placement; a name in use is a KindConflict
// error.
func (s *Store) CreatePlacement(ctx context.Context, in marquee.PlacementInput) (marquee.Placement, error) {
	return write(ctx, s, "create placement", func(tx Tx, now time.Time) (marquee.Placement, error) {
		p := marquee.Placement{PlacementInput: in, CreatedAt: now, UpdatedAt: now}
		if err := checkDefaultAd(ctx, tx, in.DefaultAdID); err != nil {
			return p, err
		}
		sizes, types := placementJSON(in)
		var err error
		p.ID, err = s.insertID(ctx, tx, `INSERT INTO placements (name, site, sizes, types, default_ad_id, passback, floor, expected_daily_requests, created_at, updated_at, ad_breaks, max_duration_ms, render_proof, child_directed)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			"name", in.Name, in.Site, sizes, types, in.DefaultAdID, passbackOf(in), int64(in.Floor), in.ExpectedDailyRequests, now.UnixMilli(), now.UnixMilli(), adBreaksOf(in), in.MaxDurationMs, boolInt(in.RenderProof), boolInt(in.ChildDirected))
		if errors.Is(err, errDuplicate) {
			return p, marquee.Errorf(marquee.KindConflict, "placement %q exists", in.Name)
		}
		if err != nil {
			return p, err
		}
		return p, tx.LogChange(ctx, marquee.EntityPlacement, p.ID, in.Name, marquee.OpPut)
	})
}

// Placement returns placement name, or marquee.NoPlacement.
func (s *Store) Placement(ctx context.Context, name string) (marquee.Placement, error) {
	return withDB(ctx, s, "get placement", func(db DB) (marquee.Placement, error) {
		p, err := scanPlacement(db.QueryRow(ctx, `SELECT `+placementCols+` FROM placements WHERE name = ?`, name))
		if errors.Is(err, ErrNoRows) {
			return p, marquee.NoPlacement(name)
		}
		return p, err
	})
}

// ReplacePlacement replaces what a client sets of placement name but its
// name.
func (s *Store) ReplacePlacement(ctx context.Context, name string, in marquee.PlacementInput) (marquee.Placement, error) {
	return write(ctx, s, "replace placement", func(tx Tx, now time.Time) (marquee.Placement, error) {
		if in.Name != name {
			return marquee.Placement{}, marquee.Invalid("invalid placement",
				marquee.Problems{"name": "cannot change; create a new placement and delete this one"})
		}
		p, err := scanPlacement(tx.QueryRow(ctx, `SELECT `+placementCols+` FROM placements WHERE name = ?`+s.cfg.ForUpdate, name))
		if errors.Is(err, ErrNoRows) {
			return p, marquee.NoPlacement(name)
		}
		if err != nil {
			return p, err
		}
		if err := checkDefaultAd(ctx, tx, in.DefaultAdID); err != nil {
			return p, err
		}
		sizes, types := placementJSON(in)
		if _, err := tx.Exec(ctx, `UPDATE placements SET site = ?, sizes = ?, types = ?, default_ad_id = ?, passback = ?, floor = ?, expected_daily_requests = ?, updated_at = ?,
			ad_breaks = ?, max_duration_ms = ?, render_proof = ?, child_directed = ? WHERE id = ?`,
			in.Site, sizes, types, in.DefaultAdID, passbackOf(in), int64(in.Floor), in.ExpectedDailyRequests, now.UnixMilli(), adBreaksOf(in), in.MaxDurationMs, boolInt(in.RenderProof), boolInt(in.ChildDirected), p.ID); err != nil {
			return p, err
		}
		p.PlacementInput, p.UpdatedAt = in, now
		return p, tx.LogChange(ctx, marquee.EntityPlacement, p.ID, name, marquee.OpPut)
	})
}

// DeletePlacement deletes placement name; one that ads are limited to is
// a KindConflict error naming them.
func (s *Store) DeletePlacement(ctx context.Context, name string) error {
	return exec(ctx, s, "delete placement", func(tx Tx, now time.Time) error {
		var id int64
		err := tx.QueryRow(ctx, `SELECT id FROM placements WHERE name = ?`+s.cfg.ForUpdate, name).Scan(&id)
		if errors.Is(err, ErrNoRows) {
			return marquee.NoPlacement(name)
		}
		if err != nil {
			return err
		}
		// Names are [a-z0-9_-]: only _ needs escaping in the pattern.
		pattern := `%"` + strings.ReplaceAll(name, `_`, `!_`) + `"%`
		ads, err := query(ctx, tx, func(r Rows) (int64, error) { var a int64; return a, r.Scan(&a) },
			`SELECT id FROM ads WHERE placements LIKE ? ESCAPE '!' ORDER BY id LIMIT 10`, pattern)
		if err != nil {
			return err
		}
		if len(ads) > 0 {
			return marquee.Errorf(marquee.KindConflict, "ads are limited to placement %q (%s): change them first", name, joinIDs(ads))
		}
		if _, err := tx.Exec(ctx, `DELETE FROM placements WHERE id = ?`, id); err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntityPlacement, id, name, marquee.OpDelete)
	})
}

// ListPlacements returns a page of placements whose names start with
// f.Query, by name, and how many there are.
func (s *Store) ListPlacements(ctx context.Context, f marquee.ListFilter) ([]marquee.Placement, int, error) {
	f.State, f.Parent = "", 0
	where, args := listWhere(f, "name")
	var total int
	list, err := withDB(ctx, s, "list placements", func(db DB) ([]marquee.Placement, error) {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM placements`+where, args...).Scan(&total); err != nil {
			return nil, err
		}
		return query(ctx, db, func(r Rows) (marquee.Placement, error) { return scanPlacement(r) },
			`SELECT `+placementCols+` FROM placements`+where+` ORDER BY name LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	})
	return list, total, err
}
