package marquee

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// What an advertiser's or a publisher's account (a bound one) may keep
// and mail: its saved reports, and the report mails of all of them in 24
// hours ("send now" and schedules alike). The team's accounts have no
// count limit. Counted under a lock in the transaction that adds one
// (the stores), so instances at once never pass them.
const (
	MaxBoundSavedReports = 10
	MaxBoundMailsADay    = 2 * MaxBoundSavedReports
)

// SavedReport is a report by several dimensions kept by name: its query
// (the parameters of GET /api/v1/reports, without the range), and
// optionally a schedule that emails it (docs/api.md#saved-reports-and-schedules).
// Owner and Bounds are the saver's: a report saved by an advertiser's or
// a publisher's account is theirs alone, and runs bound as they are.
type SavedReport struct {
	ID        int64     `json:"id,string"`
	Name      string    `json:"name"`
	Query     string    `json:"query"`
	Schedule  *Schedule `json:"schedule"`
	Owner     string    `json:"owner"`
	Bounds    Bounds    `json:"-"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Schedule says when a saved report is emailed, and to whom: every day,
// week (on Weekday) or month (on MonthDay), at At in TimeZone, the
// period just ended — the day before, the 7 days before, or the month
// before (from the previous MonthDay) — as Format, to To.
type Schedule struct {
	Every    string   `json:"every"`              // daily, weekly or monthly
	Weekday  string   `json:"weekday,omitempty"`  // weekly: monday … sunday (default monday)
	MonthDay int      `json:"monthDay,omitempty"` // monthly: 1 … 28 (default 1)
	At       string   `json:"at"`                 // HH:MM, local (default 06:00)
	TimeZone string   `json:"timeZone"`           // IANA (default UTC)
	Format   string   `json:"format"`             // csv or xlsx (default csv)
	To       []string `json:"to"`                 // 1 to MaxRecipients addresses
}

// The schedules' frequencies.
const (
	Daily   = "daily"
	Weekly  = "weekly"
	Monthly = "monthly"
)

// MaxRecipients bounds a schedule's addresses.
const MaxRecipients = 20

// MaxReportQuery bounds a saved report's query, in bytes.
const MaxReportQuery = 2048

var weekdays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// ParseSavedReportInput decodes and checks a saved report's body: name
// (required), query (required: GET /api/v1/reports's parameters, without
// from and to; the caller checks them as that route does) and schedule
// (optional, null for none).
func ParseSavedReportInput(body []byte) (SavedReport, error) {
	var r SavedReport
	p := Problems{}
	fields, ok := object(body, p, "name", "query", "schedule")
	if !ok {
		return r, Invalid("invalid saved report", p)
	}
	r.Name = nameField(fields, "name", true, p)
	if raw, ok := present(fields, "query"); !ok {
		p["query"] = "is required"
	} else if json.Unmarshal(raw, &r.Query) != nil || len(r.Query) > MaxReportQuery {
		p["query"] = fmt.Sprintf("must be a query string of at most %d bytes", MaxReportQuery)
	} else if v, err := url.ParseQuery(strings.TrimPrefix(r.Query, "?")); err != nil {
		p["query"] = "must be a query string (by=campaign,placement&granularity=day)"
	} else {
		if v.Has("from") || v.Has("to") || v.Has("format") {
			p["query"] = "holds no from, to or format: a run gives the range, a schedule the format"
		}
		r.Query = v.Encode()
	}
	if raw, ok := present(fields, "schedule"); ok {
		var s Schedule
		if err := json.Unmarshal(raw, &s); err != nil {
			p["schedule"] = `must be an object {"every","weekday","monthDay","at","timeZone","format","to"}`
		} else {
			r.Schedule = &s
			s.check(p)
		}
	}
	return r, Invalid("invalid saved report", p)
}

// check fills s's defaults and notes what is wrong in p.
func (s *Schedule) check(p Problems) {
	switch s.Every {
	case Daily, Weekly, Monthly:
	default:
		p["schedule.every"] = "must be one of daily, weekly, monthly"
	}
	if s.Every == Weekly {
		s.Weekday = strings.ToLower(cmp.Or(s.Weekday, "monday"))
		if !slices.Contains(weekdays, s.Weekday) {
			p["schedule.weekday"] = "must be a day of the week (monday … sunday)"
		}
	} else if s.Weekday != "" {
		p["schedule.weekday"] = "is for a weekly schedule"
	}
	if s.Every == Monthly {
		if s.MonthDay == 0 {
			s.MonthDay = 1
		}
		if s.MonthDay < 1 || s.MonthDay > 28 {
			p["schedule.monthDay"] = "must be 1 to 28 (every month has it)"
		}
	} else if s.MonthDay != 0 {
		p["schedule.monthDay"] = "is for a monthly schedule"
	}
	s.At = cmp.Or(s.At, "06:00")
	if _, err := time.Parse("15:04", s.At); err != nil || len(s.At) != 5 {
		p["schedule.at"] = "must be HH:MM (24-hour, local)"
	}
	s.TimeZone = cmp.Or(s.TimeZone, "UTC")
	if _, err := ParseTimeZone(s.TimeZone); err != nil {
		p["schedule.timeZone"] = err.Error()
	}
	s.Format = cmp.Or(s.Format, "csv")
	if s.Format != "csv" && s.Format != "xlsx" {
		p["schedule.format"] = "must be csv or xlsx"
	}
	switch {
	case len(s.To) == 0 || len(s.To) > MaxRecipients:
		p["schedule.to"] = fmt.Sprintf("must be 1 to %d email addresses", MaxRecipients)
	default:
		for i, a := range s.To {
			e, ok := normalEmail(a)
			if !ok {
				p[fmt.Sprintf("schedule.to[%d]", i)] = "must be an email address"
			}
			s.To[i] = e
		}
	}
}

// Period is what one run of a schedule covers, [From, To), and when it is
// due (sent): To's day at the schedule's time.
type Period struct{ From, To, Due time.Time }

// LastDue is the latest period of s due at or before now (in s's time
// zone: days and months as the zone has them, 23 or 25 hours across a
// change of daylight saving time). ok is false when the zone is unknown.
func (s *Schedule) LastDue(now time.Time) (p Period, ok bool) {
	loc, err := ParseTimeZone(s.TimeZone)
	if err != nil {
		return p, false
	}
	at, err := time.Parse("15:04", s.At)
	if err != nil {
		return p, false
	}
	local := now.In(loc)
	// The send day: the latest day (of the right weekday or month day)
	// whose send time is not after now.
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	due := func(d time.Time) time.Time {
		return time.Date(d.Year(), d.Month(), d.Day(), at.Hour(), at.Minute(), 0, 0, loc)
	}
	for range 62 {
		if d := due(day); !d.After(now) && s.sendsOn(day) {
			return s.period(day, d, loc), true
		}
		day = time.Date(day.Year(), day.Month(), day.Day()-1, 0, 0, 0, 0, loc)
	}
	return p, false
}

// sendsOn says whether day (local midnight) is a send day of s.
func (s *Schedule) sendsOn(day time.Time) bool {
	switch s.Every {
	case Weekly:
		return weekdays[day.Weekday()] == s.Weekday
	case Monthly:
		return day.Day() == s.MonthDay
	}
	return true
}

// period is the period sent on day (local midnight), due at due.
func (s *Schedule) period(day, due time.Time, loc *time.Location) Period {
	from := time.Date(day.Year(), day.Month(), day.Day()-1, 0, 0, 0, 0, loc)
	switch s.Every {
	case Weekly:
		from = time.Date(day.Year(), day.Month(), day.Day()-7, 0, 0, 0, 0, loc)
	case Monthly:
		from = time.Date(day.Year(), day.Month()-1, day.Day(), 0, 0, 0, 0, loc)
	}
	return Period{From: from, To: day, Due: due}
}

// ReportDelivery is one period's email of a scheduled report, as the
// delivery log keeps it: sending (claimed by an instance), sent,
// retrying (the mail server refused or could not be reached: tried again
// at NextAt), failed (given up after MaxDeliveryAttempts) or unknown (an
// instance stopped while sending: never sent again, since the mail may
// have gone).
type ReportDelivery struct {
	ID         int64      `json:"id,string"`
	ReportID   int64      `json:"reportId,string"`
	From       time.Time  `json:"from"`
	To         time.Time  `json:"to"`
	Status     string     `json:"status"`
	Attempts   int        `json:"attempts"`
	Error      string     `json:"error,omitempty"`
	NextAt     *time.Time `json:"nextAt,omitempty"`
	SentAt     *time.Time `json:"sentAt,omitempty"`
	Recipients []string   `json:"recipients"`
	UpdatedAt  time.Time  `json:"updatedAt"`
}

// The states of a delivery.
const (
	DeliverySending  = "sending"
	DeliverySent     = "sent"
	DeliveryRetrying = "retrying"
	DeliveryFailed   = "failed"
	DeliveryUnknown  = "unknown"
)

// MaxDeliveryAttempts bounds the attempts of one period's email.
const MaxDeliveryAttempts = 6
