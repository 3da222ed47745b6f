// Package reportmail emails scheduled reports: each instance's Scheduler
// finds the periods of saved reports' schedules that are due, claims each
// in the store (one email per period, whatever the instances), renders
// the report of the period and sends it through SMTP (Sender), and tries
// again with backoff when the mail server refuses or cannot be reached,
// keeping a delivery log (docs/api.md#saved-reports-and-schedules).
package reportmail

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"marquee"
)

// Store is what the Scheduler needs of the store.
type Store interface {
	SavedReports(ctx context.Context) ([]marquee.SavedReport, error)
	SavedReport(ctx context.Context, id int64) (marquee.SavedReport, error)
	ClaimDelivery(ctx context.Context, id int64, from, to time.Time, recipients []string) (marquee.ReportDelivery, bool, error)
	ClaimRetry(ctx context.Context, id int64) (bool, error)
	FinishDelivery(ctx context.Context, id int64, status, errText string, next, sentAt *time.Time) error
	DueRetries(ctx context.Context, now time.Time) ([]marquee.ReportDelivery, error)
	AbandonSending(ctx context.Context, before time.Time) (int64, error)
}

// Attachment is a rendered report: its file name, media type and bytes.
type Attachment struct {
	Name, ContentType string
	Data              []byte
}

// A Renderer renders saved report r over [from, to) as format (csv or
// xlsx), bound as r's owner was (reports.Multis).
type Renderer interface {
	Render(ctx context.Context, r marquee.SavedReport, from, to time.Time, format string) (Attachment, error)
}

// Mail is one email of a report.
type Mail struct {
	To         []string
	Subject    string
	Text       string
	Attachment Attachment
}

// Mailer sends an email; an error says it was not accepted.
type Mailer interface {
	Send(ctx context.Context, m Mail) error
}

// Scheduler sends saved reports' scheduled emails. Tick does one pass;
// Run ticks until its context ends.
type Scheduler struct {
	Store   Store
	Reports Renderer // what each mail attaches
	Mailer  Mailer
	Now     func() time.Time
	Log     *slog.Logger
}

// Backoff is how long after failed attempt n (1, 2, …) the next one is
// made; after marquee.MaxDeliveryAttempts the period's email is given up.
func Backoff(n int) time.Duration {
	return min(time.Minute<<(2*(n-1)), 6*time.Hour) // 1 min, 4, 16, 64, then every 4 h 16 min at most 6 h
}

// staleSending is how long a delivery may stay in state sending before it
// counts as abandoned (its instance stopped mid-send).
const staleSending = 10 * time.Minute

// Tick sends what is due at s.Now(): for each scheduled report, its
// latest period due since the schedule was last saved, unless an
// instance claimed it; then the retries whose time has come.
func (s *Scheduler) Tick(ctx context.Context) error {
	now := s.Now()
	if _, err := s.Store.AbandonSending(ctx, now.Add(-staleSending)); err != nil {
		return err
	}
	reports, err := s.Store.SavedReports(ctx)
	if err != nil {
		return err
	}
	for _, r := range reports {
		if r.Schedule == nil {
			continue
		}
		p, ok := r.Schedule.LastDue(now)
		if !ok || p.Due.Before(r.UpdatedAt) {
			continue // not due since the schedule was saved
		}
		d, claimed, err := s.Store.ClaimDelivery(ctx, r.ID, p.From, p.To, r.Schedule.To)
		switch {
		case marquee.KindOf(err) == marquee.KindTooManyRequests:
			continue // its account mailed its most for 24 hours: a later tick sends it, the others go now
		case err != nil:
			return err
		}
		if claimed {
			s.attempt(ctx, r, d)
		}
	}
	retries, err := s.Store.DueRetries(ctx, now)
	if err != nil {
		return err
	}
	for _, d := range retries {
		if ok, err := s.Store.ClaimRetry(ctx, d.ID); err != nil || !ok {
			continue
		}
		d.Attempts++
		r, err := s.Store.SavedReport(ctx, d.ReportID)
		if err != nil || r.Schedule == nil { // deleted, or no longer scheduled
			s.finish(ctx, d, marquee.DeliveryFailed, "the report or its schedule is gone", nil)
			continue
		}
		s.attempt(ctx, r, d)
	}
	return nil
}

// SendNow renders and sends saved report r's latest due period now, as a
// logged delivery of its own, whatever the schedule says (a test of the
// schedule from the console or the API): the period's delivery when this
// call claimed it.
func (s *Scheduler) SendNow(ctx context.Context, r marquee.SavedReport) (marquee.ReportDelivery, error) {
	if r.Schedule == nil {
		return marquee.ReportDelivery{}, marquee.Errorf(marquee.KindInvalid, "saved report %d has no schedule", r.ID)
	}
	p, ok := r.Schedule.LastDue(s.Now())
	if !ok {
		return marquee.ReportDelivery{}, fmt.Errorf("saved report %d: no period", r.ID)
	}
	d, claimed, err := s.Store.ClaimDelivery(ctx, r.ID, p.From, p.To, r.Schedule.To)
	if err != nil {
		return d, err
	}
	if !claimed {
		return d, marquee.Errorf(marquee.KindConflict, "the period %s – %s of saved report %d was sent (or is being sent) already: see its deliveries",
			p.From.Format(time.RFC3339), p.To.Format(time.RFC3339), r.ID)
	}
	return s.attempt(ctx, r, d), nil
}

// attempt renders and sends one period's email and records how it went.
func (s *Scheduler) attempt(ctx context.Context, r marquee.SavedReport, d marquee.ReportDelivery) marquee.ReportDelivery {
	sch := r.Schedule
	att, err := s.Reports.Render(ctx, r, d.From, d.To, sch.Format)
	if err == nil {
		loc, _ := marquee.ParseTimeZone(sch.TimeZone) // checked when the schedule was saved
		from, to := d.From.In(loc), d.To.In(loc)
		err = s.Mailer.Send(ctx, Mail{To: sch.To, Attachment: att,
			// The report's name is its saver's text: quoted (%q escapes line
			// breaks and quotes), never bare in the subject.
			Subject: fmt.Sprintf("Marquee report %q: %s – %s", r.Name, from.Format("2 Jan 2006"), to.Add(-time.Second).Format("2 Jan 2006")),
			Text: fmt.Sprintf("Marquee's %s report %q for %s to %s (%s), attached as %s.\n",
				sch.Every, r.Name, from.Format(time.RFC3339), to.Format(time.RFC3339), sch.TimeZone, att.Name)})
	}
	if err == nil {
		at := s.Now()
		d.SentAt = &at
		return s.finish(ctx, d, marquee.DeliverySent, "", nil)
	}
	if d.Attempts >= marquee.MaxDeliveryAttempts {
		return s.finish(ctx, d, marquee.DeliveryFailed, err.Error(), nil)
	}
	next := s.Now().Add(Backoff(d.Attempts))
	return s.finish(ctx, d, marquee.DeliveryRetrying, err.Error(), &next)
}

// finish records d's new state (logging what failed).
func (s *Scheduler) finish(ctx context.Context, d marquee.ReportDelivery, status, errText string, next *time.Time) marquee.ReportDelivery {
	d.Status, d.Error, d.NextAt = status, errText, next
	if errText != "" && s.Log != nil {
		s.Log.Warn("report email not sent", "report", d.ReportID, "from", d.From, "attempt", d.Attempts, "status", status, "err", errText)
	}
	if err := s.Store.FinishDelivery(ctx, d.ID, status, errText, next, d.SentAt); err != nil && s.Log != nil {
		s.Log.Error("report delivery not recorded", "report", d.ReportID, "delivery", d.ID, "err", err)
	}
	return d
}

// Run ticks every interval until ctx ends.
func (s *Scheduler) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil && s.Log != nil {
			s.Log.Warn("report schedules", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
