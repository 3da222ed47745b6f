package sqltx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"marquee"
)

const savedCols = `id, name, query, schedule, owner, bounds, created_at, updated_at`

func scanSaved(r Row) (marquee.SavedReport, error) {
	var sr marquee.SavedReport
	var schedule *string
	var bounds string
	var created, updated int64
	if err := r.Scan(&sr.ID, &sr.Name, &sr.Query, &schedule, &sr.Owner, &bounds, &created, &updated); err != nil {
		return sr, err
	}
	sr.Bounds, sr.CreatedAt, sr.UpdatedAt = marquee.BoundsOf(bounds), time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	if schedule != nil && *schedule != "" {
		sr.Schedule = &marquee.Schedule{}
		if err := json.Unmarshal([]byte(*schedule), sr.Schedule); err != nil {
			return sr, fmt.Errorf("saved report %d: decode schedule: %w", sr.ID, err)
		}
	}
	return sr, nil
}

func scheduleText(s *marquee.Schedule) any {
	if s == nil {
		return nil
	}
	j, _ := json.Marshal(s)
	return string(j)
}

func noSavedReport(id int64) error {
	return marquee.Errorf(marquee.KindNotFound, "no saved report %d", id)
}

// CreateSavedReport stores a saved report (its owner and bounds as
// given).
func (s *Store) CreateSavedReport(ctx context.Context, r marquee.SavedReport) (marquee.SavedReport, error) {
	return write(ctx, s, "create saved report", func(tx Tx, now time.Time) (marquee.SavedReport, error) {
		r.CreatedAt, r.UpdatedAt = now, now
		if r.Bounds.Bound() {
			bounds := r.Bounds.String()
			if err := s.lockScope(ctx, tx, "saved-reports "+bounds); err != nil {
				return r, err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM saved_reports WHERE bounds = ?`, bounds).Scan(&n); err != nil {
				return r, err
			}
			if n >= marquee.MaxBoundSavedReports {
				return r, marquee.Errorf(marquee.KindConflict, "this account keeps %d saved reports, the most an advertiser's or a publisher's account may: delete one first", n)
			}
		}
		var err error
		r.ID, err = s.insertID(ctx, tx, `INSERT INTO saved_reports (name, query, schedule, owner, bounds, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			"", r.Name, r.Query, scheduleText(r.Schedule), r.Owner, r.Bounds.String(), now.UnixMilli(), now.UnixMilli())
		if err != nil {
			return r, err
		}
		return r, tx.LogChange(ctx, marquee.EntitySavedReport, r.ID, "", marquee.OpPut)
	})
}

// SavedReport returns saved report id, or a KindNotFound error.
func (s *Store) SavedReport(ctx context.Context, id int64) (marquee.SavedReport, error) {
	return withDB(ctx, s, "read saved report", func(db DB) (marquee.SavedReport, error) {
		r, err := scanSaved(db.QueryRow(ctx, `SELECT `+savedCols+` FROM saved_reports WHERE id = ?`, id))
		if errors.Is(err, ErrNoRows) {
			return r, noSavedReport(id)
		}
		return r, err
	})
}

// SavedReports returns every saved report, by id.
func (s *Store) SavedReports(ctx context.Context) ([]marquee.SavedReport, error) {
	return withDB(ctx, s, "list saved reports", func(db DB) ([]marquee.SavedReport, error) {
		return query(ctx, db, func(r Rows) (marquee.SavedReport, error) { return scanSaved(r) }, `SELECT `+savedCols+` FROM saved_reports ORDER BY id`)
	})
}

// ReplaceSavedReport changes saved report id's name, query and schedule;
// its owner and bounds stay.
func (s *Store) ReplaceSavedReport(ctx context.Context, id int64, r marquee.SavedReport) (marquee.SavedReport, error) {
	return write(ctx, s, "replace saved report", func(tx Tx, now time.Time) (marquee.SavedReport, error) {
		old, err := scanSaved(tx.QueryRow(ctx, `SELECT `+savedCols+` FROM saved_reports WHERE id = ?`+s.cfg.ForUpdate, id))
		if errors.Is(err, ErrNoRows) {
			return old, noSavedReport(id)
		}
		if err != nil {
			return old, err
		}
		old.Name, old.Query, old.Schedule, old.UpdatedAt = r.Name, r.Query, r.Schedule, now
		if _, err = tx.Exec(ctx, `UPDATE saved_reports SET name = ?, query = ?, schedule = ?, updated_at = ? WHERE id = ?`,
			old.Name, old.Query, scheduleText(old.Schedule), now.UnixMilli(), id); err != nil {
			return old, err
		}
		return old, tx.LogChange(ctx, marquee.EntitySavedReport, id, "", marquee.OpPut)
	})
}

// DeleteSavedReport deletes saved report id and its delivery log.
func (s *Store) DeleteSavedReport(ctx context.Context, id int64) error {
	return exec(ctx, s, "delete saved report", func(tx Tx, _ time.Time) error {
		n, err := tx.Exec(ctx, `DELETE FROM saved_reports WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return noSavedReport(id)
		}
		if _, err = tx.Exec(ctx, `DELETE FROM report_deliveries WHERE report_id = ?`, id); err != nil {
			return err
		}
		return tx.LogChange(ctx, marquee.EntitySavedReport, id, "", marquee.OpDelete)
	})
}

const deliveryCols = `id, report_id, period_from, period_to, status, attempts, error, next_at, sent_at, recipients, updated_at`

func scanDelivery(r Row) (marquee.ReportDelivery, error) {
	var d marquee.ReportDelivery
	var from, to, updated int64
	var next, sent *int64
	var recipients string
	if err := r.Scan(&d.ID, &d.ReportID, &from, &to, &d.Status, &d.Attempts, &d.Error, &next, &sent, &recipients, &updated); err != nil {
		return d, err
	}
	d.From, d.To, d.UpdatedAt = time.UnixMilli(from).UTC(), time.UnixMilli(to).UTC(), time.UnixMilli(updated).UTC()
	if next != nil {
		t := time.UnixMilli(*next).UTC()
		d.NextAt = &t
	}
	if sent != nil {
		t := time.UnixMilli(*sent).UTC()
		d.SentAt = &t
	}
	d.Recipients = strings.Split(recipients, ",")
	return d, nil
}

// ClaimDelivery records that this instance sends report id's period
// [from, to) to recipients: the delivery, and true, when no instance
// claimed that period before (one email per period, whatever the
// instances).
func (s *Store) ClaimDelivery(ctx context.Context, id int64, from, to time.Time, recipients []string) (marquee.ReportDelivery, bool, error) {
	d := marquee.ReportDelivery{ReportID: id, From: from, To: to, Status: marquee.DeliverySending, Attempts: 1, Recipients: recipients}
	claimed := false
	err := exec(ctx, s, "claim report delivery", func(tx Tx, now time.Time) error {
		var bounds string
		if err := tx.QueryRow(ctx, `SELECT bounds FROM saved_reports WHERE id = ?`, id).Scan(&bounds); err != nil && !errors.Is(err, ErrNoRows) {
			return err
		}
		if marquee.BoundsOf(bounds).Bound() { // an outsider's account: its mails a day, counted under its lock
			if err := s.lockScope(ctx, tx, "report-mails "+bounds); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM report_deliveries d JOIN saved_reports r ON r.id = d.report_id WHERE r.bounds = ? AND d.claimed_at > ?`,
				bounds, now.Add(-24*time.Hour).UnixMilli()).Scan(&n); err != nil {
				return err
			}
			if n >= marquee.MaxBoundMailsADay {
				return &marquee.Error{Kind: marquee.KindTooManyRequests, RetryAfter: time.Hour,
					Message: fmt.Sprintf("this account mailed %d reports in 24 hours, the most an advertiser's or a publisher's account may", n)}
			}
		}
		var err error
		d.UpdatedAt = now
		d.ID, err = s.insertID(ctx, tx, `INSERT INTO report_deliveries (report_id, period_from, period_to, status, attempts, error, recipients, updated_at, claimed_at) VALUES (?, ?, ?, ?, 1, '', ?, ?, ?)`,
			"report_id, period_from", id, from.UnixMilli(), to.UnixMilli(), d.Status, strings.Join(recipients, ","), now.UnixMilli(), now.UnixMilli())
		if errors.Is(err, errDuplicate) {
			return nil
		}
		claimed = err == nil
		return err
	})
	return d, claimed, err
}

// ClaimRetry claims a delivery in state retrying whose time has come
// (nextAt at or before now) for one more attempt: true when this call
// claimed it (another instance may have).
func (s *Store) ClaimRetry(ctx context.Context, id int64) (bool, error) {
	var n int64
	err := exec(ctx, s, "claim report delivery retry", func(tx Tx, now time.Time) error {
		var err error
		n, err = tx.Exec(ctx, `UPDATE report_deliveries SET status = ?, attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = ?`,
			marquee.DeliverySending, now.UnixMilli(), id, marquee.DeliveryRetrying)
		return err
	})
	return n == 1, err
}

// FinishDelivery records the end of a delivery's attempt: sent (at
// sentAt), retrying at next (with the error), failed or unknown.
func (s *Store) FinishDelivery(ctx context.Context, id int64, status, errText string, next, sentAt *time.Time) error {
	return exec(ctx, s, "finish report delivery", func(tx Tx, now time.Time) error {
		var nextMs, sentMs any
		if next != nil {
			nextMs = next.UnixMilli()
		}
		if sentAt != nil {
			sentMs = sentAt.UnixMilli()
		}
		if len(errText) > 1000 {
			errText = errText[:1000]
		}
		_, err := tx.Exec(ctx, `UPDATE report_deliveries SET status = ?, error = ?, next_at = ?, sent_at = ?, updated_at = ? WHERE id = ?`,
			status, errText, nextMs, sentMs, now.UnixMilli(), id)
		return err
	})
}

// DueRetries returns the deliveries in state retrying whose time has come
// at now, oldest first.
func (s *Store) DueRetries(ctx context.Context, now time.Time) ([]marquee.ReportDelivery, error) {
	return withDB(ctx, s, "read report retries", func(db DB) ([]marquee.ReportDelivery, error) {
		return query(ctx, db, func(r Rows) (marquee.ReportDelivery, error) { return scanDelivery(r) },
			`SELECT `+deliveryCols+` FROM report_deliveries WHERE status = ? AND next_at <= ? ORDER BY next_at, id`,
			marquee.DeliveryRetrying, now.UnixMilli())
	})
}

// AbandonSending marks deliveries left in state sending since before
// before (an instance stopped while sending) as unknown: the mail may
// have gone, so it is never sent again.
func (s *Store) AbandonSending(ctx context.Context, before time.Time) (int64, error) {
	return withDB(ctx, s, "abandon report deliveries", func(db DB) (int64, error) {
		return db.Exec(ctx, `UPDATE report_deliveries SET status = ?, error = ? WHERE status = ? AND updated_at < ?`,
			marquee.DeliveryUnknown, "the instance sending it stopped: it may have been sent, so it is not sent again", marquee.DeliverySending, before.UnixMilli())
	})
}

// ReportDeliveries returns saved report id's delivery log, newest period
// first, at most limit.
func (s *Store) ReportDeliveries(ctx context.Context, id int64, limit int) ([]marquee.ReportDelivery, error) {
	return withDB(ctx, s, "read report deliveries", func(db DB) ([]marquee.ReportDelivery, error) {
		return query(ctx, db, func(r Rows) (marquee.ReportDelivery, error) { return scanDelivery(r) },
			`SELECT `+deliveryCols+` FROM report_deliveries WHERE report_id = ? ORDER BY period_from DESC, id DESC LIMIT ?`, id, limit)
	})
}
