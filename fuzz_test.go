package marquee_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"marquee"
)

// FuzzParseAdInput: whatever the body, ParseAdInput either names at least
// one problem, or returns an input that holds every rule of the contract.
func FuzzParseAdInput(f *testing.F) {
	for _, seed := range []string{
		`{"title":"AD 55","startAt":"2023-12-10T03:00:00.000Z","endAt":"2023-12-31T16:00:00.000Z","conditions":[{"ageStart":20,"ageEnd":30,"country":["TW","JP"],"platform":["android","ios"]}]}`,
		`{"title":"a","startAt":"2023-12-10T03:00:00+08:00","endAt":"2023-12-10T03:00:00.001+08:00","conditions":{"gender":"F","country":"tw"}}`,
		`{"title":"","conditions":[1,{"x":2}]}`, `[]`, `{`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := marquee.ParseAdInput(body)
		if err != nil {
			if inv := marquee.AsError(err); inv == nil || inv.Kind != marquee.KindInvalid || len(inv.Problems) == 0 {
				t.Fatalf("ParseAdInput(%q) error %v; want a KindInvalid *Error naming a problem", body, err)
			}
			return
		}
		if strings.TrimSpace(in.Title) == "" || utf8.RuneCountInString(in.Title) > marquee.MaxTitleLen {
			t.Fatalf("ParseAdInput(%q) accepted title %q", body, in.Title)
		}
		if !in.EndAt.After(in.StartAt) || in.StartAt.Location() != time.UTC || in.StartAt.Nanosecond()%1e6 != 0 {
			t.Fatalf("ParseAdInput(%q) accepted window %v – %v", body, in.StartAt, in.EndAt)
		}
		again := in
		if err := again.Validate(); err != nil {
			t.Fatalf("ParseAdInput(%q) accepted %+v, which Validate refuses: %v", body, in, err)
		}
		for _, c := range in.Conditions {
			if c.AgeStart != 0 && c.AgeEnd != 0 && c.AgeStart > c.AgeEnd {
				t.Fatalf("ParseAdInput(%q) accepted ages %d > %d", body, c.AgeStart, c.AgeEnd)
			}
			for _, cc := range c.Country {
				if _, ok := marquee.CountrySlot(cc); !ok || cc != strings.ToUpper(cc) {
					t.Fatalf("ParseAdInput(%q) accepted country %q", body, cc)
				}
			}
			for _, p := range c.Platform {
				if p != strings.ToLower(p) {
					t.Fatalf("ParseAdInput(%q) accepted platform %q", body, p)
				}
			}
		}
	})
}
