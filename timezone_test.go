package marquee_test

import (
	"errors"
	"testing"

	"marquee"
)

// TestOneTimeZoneReader: every feature that takes a time zone reads it
// with ParseTimeZone — "" is UTC, an IANA name its zone, and "Local" (the
// server's, which differs from machine to machine) or an unknown name an
// error — and a schedule names its field when the zone is refused.
func TestOneTimeZoneReader(t *testing.T) {
	for _, c := range []struct {
		tz, want string // want: the zone's name; "" an error
	}{{"", "UTC"}, {"UTC", "UTC"}, {"Europe/Paris", "Europe/Paris"}, {"Local", ""}, {"local", ""}, {"Mars/Olympus_Mons", ""}} {
		loc, err := marquee.ParseTimeZone(c.tz)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("ParseTimeZone(%q) = %v; want an error", c.tz, loc)
		case c.want != "" && (err != nil || loc.String() != c.want):
			t.Errorf("ParseTimeZone(%q) = %v, %v; want %s", c.tz, loc, err, c.want)
		}
	}
	for _, tz := range []string{"Local", "Mars/Olympus_Mons"} {
		_, err := marquee.ParseSavedReportInput([]byte(`{"name":"n","query":"by=campaign","schedule":{"every":"day","timeZone":"` + tz + `","to":["a@example.com"]}}`))
		var e *marquee.Error
		if !errors.As(err, &e) || e.Problems["schedule.timeZone"] == "" {
			t.Errorf("a schedule in %q = %v; want a problem naming schedule.timeZone", tz, err)
		}
	}
}
