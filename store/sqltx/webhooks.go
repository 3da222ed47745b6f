package sqltx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"marquee"
)

const webhookCols = `id, url, events, link, ad_id, campaign_id, unverified, nonce, state, disabled_reason, created_at, updated_at`

func scanWebhook(r Row) (marquee.Webhook, error) {
	var w marquee.Webhook
	var events string
	var created, updated, unverified int64
	if err := r.Scan(&w.ID, &w.URL, &events, &w.Link, &w.AdID, &w.CampaignID, &unverified, &w.Nonce, &w.State, &w.DisabledReason, &created, &updated); err != nil {
		return w, err
	}
	w.Unverified = unverified != 0
	w.CreatedAt, w.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return w, fmt.Errorf("webhook %d: decode events: %w", w.ID, err)
	}
	return w, nil
}

func noWebhook(id int64) error { return marquee.Errorf(marquee.KindNotFound, "no webhook %d", id) }

// CreateWebhook stores a new, active webhook with its secret's nonce.
func (s *Store) CreateWebhook(ctx context.Context, in marquee.WebhookInput, nonce string) (marquee.Webhook, error) {
	return write(ctx, s, "create webhook", func(tx Tx, now time.Time) (marquee.Webhook, error) {
		w := marquee.Webhook{WebhookInput: in, State: marquee.WebhookActive, Nonce: nonce, CreatedAt: now, UpdatedAt: now}
		events, _ := json.Marshal(append([]string{}, in.Events...))
		var err error
		unverified := 0
		if in.Unverified {
			unverified = 1
		}
		w.ID, err = s.insertID(ctx, tx, `INSERT INTO webhooks (url, events, link, ad_id, campaign_id, unverified, nonce, state, disabled_reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?)`,
			"", in.URL, string(events), in.Link, in.AdID, in.CampaignID, unverified, nonce, w.State, now.UnixMilli(), now.UnixMilli())
		if err != nil {
			return w, err
		}
		return w, tx.LogChange(ctx, marquee.EntityWebhook, w.ID, "", marquee.OpPut)
	})
}

// Webhook returns webhook id, or a KindNotFound error.
func (s *Store) Webhook(ctx context.Context, id int64) (marquee.Webhook, error) {
	return withDB(ctx, s, "get webhook", func(db DB) (marquee.Webhook, error) {
		w, err := scanWebhook(db.QueryRow(ctx, `SELECT `+webhookCols+` FROM webhooks WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return w, noWebhook(id)
		}
		return w, err
	})
}

// Webhooks returns every webhook, by id.
func (s *Store) Webhooks(ctx context.Context) ([]marquee.Webhook, error) {
	return withDB(ctx, s, "list webhooks", func(db DB) ([]marquee.Webhook, error) {
		return query(ctx, db, func(r Rows) (marquee.Webhook, error) { return scanWebhook(r) }, `SELECT `+webhookCols+` FROM webhooks ORDER BY id`)
	})
}

// SetWebhookState makes webhook id active, or disabled for reason.
func (s *Store) SetWebhookState(ctx context.Context, id int64, state, reason string) (marquee.Webhook, error) {
	return write(ctx, s, "set webhook state", func(tx Tx, now time.Time) (marquee.Webhook, error) {
		w, err := scanWebhook(tx.QueryRow(ctx, `SELECT `+webhookCols+` FROM webhooks WHERE id = ?`+s.cfg.ForUpdate, id))
		if errors.Is(err, ErrNoRows) {
			return w, noWebhook(id)
		}
		if err != nil {
			return w, err
		}
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET state = ?, disabled_reason = ?, updated_at = ? WHERE id = ?`, state, reason, now.UnixMilli(), id); err != nil {
			return w, err
		}
		w.State, w.DisabledReason, w.UpdatedAt = state, reason, now
		return w, tx.LogChange(ctx, marquee.EntityWebhook, id, "", marquee.OpPut)
	})
}

// DeleteWebhook deletes webhook id and its delivery log.
func (s *Store) DeleteWebhook(ctx context.Context, id int64) error {
	return exec(ctx, s, "delete webhook", func(tx Tx, now time.Time) error {
		res, err := tx.Exec(ctx, `DELETE FROM webhooks WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if res == 0 {
			return noWebhook(id)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = ?`, id); err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntityWebhook, id, "", marquee.OpDelete)
	})
}

// AddWebhookDeliveries appends attempts to the delivery log.
func (s *Store) AddWebhookDeliveries(ctx context.Context, ds []marquee.WebhookDelivery) error {
	return exec(ctx, s, "log webhook deliveries", func(tx Tx, now time.Time) error {
		for _, d := range ds {
			if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (webhook_id, message_id, at, status, latency_ms, attempt, events, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				d.WebhookID, d.MessageID, d.At.UnixMilli(), d.Status, d.LatencyMS, d.Attempt, d.Events, d.Error); err != nil {
				return err
			}
		}
		return nil
	})
}

// WebhookDeliveries returns the last limit attempts of webhook id, newest
// first.
func (s *Store) WebhookDeliveries(ctx context.Context, id int64, limit int) ([]marquee.WebhookDelivery, error) {
	return withDB(ctx, s, "list webhook deliveries", func(db DB) ([]marquee.WebhookDelivery, error) {
		return query(ctx, db, func(r Rows) (marquee.WebhookDelivery, error) {
			var d marquee.WebhookDelivery
			var at int64
			err := r.Scan(&d.WebhookID, &d.MessageID, &at, &d.Status, &d.LatencyMS, &d.Attempt, &d.Events, &d.Error)
			d.At = time.UnixMilli(at).UTC()
			return d, err
		}, `SELECT webhook_id, message_id, at, status, latency_ms, attempt, events, error FROM webhook_deliveries WHERE webhook_id = ? ORDER BY at DESC, id DESC LIMIT ?`, id, limit)
	})
}
