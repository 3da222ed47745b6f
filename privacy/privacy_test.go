package privacy_test

import (
	"net/netip"
	"testing"
	"time"

	"marquee/privacy"
	"marquee/privacy/privacytest"
)

func TestLimit(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	given := privacytest.TCString([]int{1, 2, 7}, []int{3, 755})
	refused := privacytest.TCString([]int{2, 7}, []int{3, 755}) // no purpose 1
	notVendor := privacytest.TCString([]int{1, 2, 7}, []int{3})
	for _, c := range []struct {
		name   string
		mode   privacy.Mode
		vendor uint16
		s      privacy.Signal
		want   privacy.Limit
	}{
		{"no signal, balanced", privacy.Balanced, 0, privacy.Signal{GDPR: -1}, privacy.None},
		{"no signal, strict", privacy.Strict, 0, privacy.Signal{GDPR: -1}, privacy.NoSignal},
		{"no signal, off", privacy.Off, 0, privacy.Signal{GDPR: -1}, privacy.None},
		{"no GDPR, strict", privacy.Strict, 0, privacy.Signal{GDPR: 0}, privacy.None},
		{"no GDPR, a string anyway", privacy.Balanced, 0, privacy.Signal{GDPR: 0, TCF: []byte(refused)}, privacy.None},
		{"consent given", privacy.Strict, 0, privacy.Signal{GDPR: 1, TCF: []byte(given)}, privacy.None},
		{"consent given, gdpr unsaid", privacy.Balanced, 0, privacy.Signal{GDPR: -1, TCF: []byte(given)}, privacy.None},
		{"consent refused", privacy.Balanced, 0, privacy.Signal{GDPR: 1, TCF: []byte(refused)}, privacy.Refused},
		{"refused, gdpr unsaid", privacy.Off, 0, privacy.Signal{GDPR: -1, TCF: []byte(refused)}, privacy.Refused},
		{"GDPR applies, no string", privacy.Balanced, 0, privacy.Signal{GDPR: 1}, privacy.Refused},
		{"unreadable string", privacy.Balanced, 0, privacy.Signal{GDPR: 1, TCF: []byte("not a consent string")}, privacy.Refused},
		{"vendor consented", privacy.Balanced, 755, privacy.Signal{GDPR: 1, TCF: []byte(given)}, privacy.None},
		{"vendor not consented", privacy.Balanced, 755, privacy.Signal{GDPR: 1, TCF: []byte(notVendor)}, privacy.Refused},
		// GPC and the US opt-outs do not withhold a user key (caps and
		// reach stay): they deny personalisation and what would leave
		// (TestDecideVectors).
		{"GPC", privacy.Off, 0, privacy.Signal{GPC: true, GDPR: 0}, privacy.None},
		{"GPC, strict, nothing else", privacy.Strict, 0, privacy.Signal{GPC: true, GDPR: -1}, privacy.NoSignal},
		{"a US string, strict, nothing else", privacy.Strict, 0, privacy.Signal{USP: []byte("1YNN"), GDPR: -1}, privacy.NoSignal},
		{"COPPA over consent", privacy.Balanced, 0, privacy.Signal{GDPR: 1, TCF: []byte(given), Child: true}, privacy.Child},
		{"the publisher's consent, strict", privacy.Strict, 0, privacy.Signal{GDPR: -1, Given: privacy.Yes}, privacy.None},
		{"the publisher's consent over a refusing string", privacy.Balanced, 0, privacy.Signal{GDPR: 1, TCF: []byte(refused), Given: privacy.Yes}, privacy.None},
		{"the publisher's refusal", privacy.Off, 0, privacy.Signal{GDPR: -1, Given: privacy.No}, privacy.Withheld},
		{"the publisher's consent under GPC", privacy.Balanced, 0, privacy.Signal{GPC: true, GDPR: -1, Given: privacy.Yes}, privacy.None},
		{"GPC and consent", privacy.Balanced, 0, privacy.Signal{GPC: true, GDPR: 1, TCF: []byte(given)}, privacy.None},
	} {
		p, err := privacy.NewPolicy(c.mode, secret, c.vendor)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Limit(c.s); got != c.want {
			t.Errorf("%s: Limit(%+v) = %q; want %q", c.name, c.s, got, c.want)
		}
	}
}

func TestParseGDPR(t *testing.T) {
	for in, want := range map[string]int8{"1": 1, "true": 1, "0": 0, "false": 0, "": -1, "yes": -1} {
		if got := privacy.ParseGDPR([]byte(in)); got != want {
			t.Errorf("ParseGDPR(%q) = %d; want %d", in, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.77":            "203.0.113.0",
		"10.1.2.3":                "10.1.2.0",
		"2001:db8:1234:5678::1":   "2001:db8:1234::",
		"2001:db8:abcd:ffff:1::9": "2001:db8:abcd::",
		"::1":                     "::",
	} {
		if got := privacy.Truncate(netip.MustParseAddr(in)); got.String() != want {
			t.Errorf("Truncate(%s) = %s; want %s", in, got, want)
		}
	}
	if got := privacy.Truncate(netip.Addr{}); got.IsValid() {
		t.Errorf("Truncate(zero) = %v; want the zero Addr", got)
	}
}

func TestPseudonyms(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	day1 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	late1 := time.Date(2026, 11, 26, 23, 59, 59, 0, time.UTC)
	day2 := time.Date(2026, 11, 27, 0, 0, 1, 0, time.UTC)
	key := []byte("visitor-42")

	bal, _ := privacy.NewPolicy(privacy.Balanced, secret, 0)
	strict, _ := privacy.NewPolicy(privacy.Strict, secret, 0)
	other, _ := privacy.NewPolicy(privacy.Balanced, []byte("another secret of 32 bytes......"), 0)

	b1, b2 := bal.User(key, day1, privacy.None), bal.User(key, day2, privacy.None)
	if b1 == 0 || b1 != b2 {
		t.Errorf("balanced: %x on day 1, %x on day 2; want one nonzero pseudonym", b1, b2)
	}
	if o := other.User(key, day1, privacy.None); o == b1 {
		t.Errorf("two secrets gave the same pseudonym %x", o)
	}
	if n := bal.User([]byte("visitor-43"), day1, privacy.None); n == b1 {
		t.Errorf("two keys gave the same pseudonym %x", n)
	}
	s1, s1late, s2 := strict.User(key, day1, privacy.None), strict.User(key, late1, privacy.None), strict.User(key, day2, privacy.None)
	if s1 != s1late {
		t.Errorf("strict: %x at 09:00, %x at 23:59:59 of the same day; want one", s1, s1late)
	}
	if s1 == s2 || s1 == b1 || s2 == b1 {
		t.Errorf("strict: day 1 %x, day 2 %x, balanced %x; want three pseudonyms", s1, s2, b1)
	}
	if again := strict.User(key, day1, privacy.None); again != s1 {
		t.Errorf("strict: back on day 1 %x; want %x again", again, s1)
	}
	if got := strict.Subject(key, day2, 2); len(got) != 2 || got[0] != s2 || got[1] != s1 {
		t.Errorf("strict Subject(2 days) = %x; want [%x %x]", got, s2, s1)
	}
	if got := bal.Subject(key, day2, 31); len(got) != 1 || got[0] != b1 {
		t.Errorf("balanced Subject = %x; want [%x]", got, b1)
	}
	if u := bal.User(key, day1, privacy.GPC); u != 0 {
		t.Errorf("User under GPC = %x; want 0", u)
	}
	if u := bal.User(nil, day1, privacy.None); u != 0 {
		t.Errorf("User(no key) = %x; want 0", u)
	}
	if _, err := privacy.NewPolicy(privacy.Balanced, []byte("short"), 0); err == nil {
		t.Error("NewPolicy with a 5-byte secret: no error")
	}
}

func TestAppendUID(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	off, _ := privacy.NewPolicy(privacy.Off, secret, 0)
	bal, _ := privacy.NewPolicy(privacy.Balanced, secret, 0)
	if got, raw, ok := off.AppendUID(nil, []byte("u1"), at, privacy.None); string(got) != "u1" || !raw || !ok {
		t.Errorf("off: %q raw=%v ok=%v; want the key as sent", got, raw, ok)
	}
	got, raw, ok := bal.AppendUID(nil, []byte("u1"), at, privacy.None)
	if !ok || raw || string(got) == "u1" || len(got) == 0 {
		t.Errorf("balanced: %q raw=%v ok=%v; want a pseudonym", got, raw, ok)
	}
	for _, p := range []*privacy.Policy{off, bal} {
		if got, _, ok := p.AppendUID(nil, []byte("u1"), at, privacy.Refused); ok || len(got) != 0 {
			t.Errorf("%v, refused: %q ok=%v; want no uid", p.Mode(), got, ok)
		}
	}
}

func TestReferrer(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	ref := "https://news.example:8443/a/b?email=x@y.example#top"
	for mode, want := range map[privacy.Mode]string{
		privacy.Off:      ref,
		privacy.Balanced: "https://news.example:8443/a/b",
		privacy.Strict:   "https://news.example:8443",
	} {
		p, _ := privacy.NewPolicy(mode, secret, 0)
		if got := p.Referrer([]byte(ref)); string(got) != want {
			t.Errorf("%v: Referrer(%q) = %q; want %q", mode, ref, got, want)
		}
	}
}

func TestHotPathAllocatesNothing(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	ip := netip.MustParseAddr("203.0.113.77")
	for _, mode := range []privacy.Mode{privacy.Balanced, privacy.Strict} {
		p, _ := privacy.NewPolicy(mode, secret, 0)
		buf, key := make([]byte, 0, 64), []byte("visitor-42") // a request's bytes
		p.User(key, at, privacy.None)
		n := testing.AllocsPerRun(1000, func() {
			s := privacy.Signal{GDPR: privacy.ParseGDPR(nil)}
			l := p.Limit(s)
			_ = privacy.Truncate(ip)
			_ = p.User(key, at, l)
			buf, _, _ = p.AppendUID(buf[:0], key, at, l)
		})
		if n != 0 {
			t.Errorf("%v: %v allocations a request; want 0", mode, n)
		}
	}
}

func BenchmarkUser(b *testing.B) {
	p, _ := privacy.NewPolicy(privacy.Balanced, []byte("0123456789abcdef0123456789abcdef"), 0)
	at := time.Now()
	key := []byte("visitor-000042")
	b.ReportAllocs()
	for b.Loop() {
		p.User(key, at, privacy.None)
	}
}

func BenchmarkTruncate(b *testing.B) {
	ip := netip.MustParseAddr("203.0.113.77")
	b.ReportAllocs()
	for b.Loop() {
		privacy.Truncate(ip)
	}
}

// TestRedactEmails: what looks like an email address in a beacon's value
// (text, or JSON with it nested) is written as [email]; anything else,
// and every value of a policy that keeps emails, as sent.
func TestRedactEmails(t *testing.T) {
	p, err := privacy.NewPolicy(privacy.Balanced, []byte("a privacy key of 32 bytes......."), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"ana.lopez+ads@mail.example.co.uk", "[email]"},
		{`{"user":{"email":"bob@example.com","plan":"pro"}}`, `{"user":{"email":"[email]","plan":"pro"}}`},
		{"contact ana@example.com or bo@example.org", "contact [email] or [email]"},
		{"@handle", "@handle"},
		{"a@localhost", "a@localhost"},
		{"checkout", "checkout"},
	} {
		if got := string(p.RedactEmails([]byte(c.in))); got != c.want {
			t.Errorf("RedactEmails(%q) = %q; want %q", c.in, got, c.want)
		}
		if got := string(p.KeepingEmails().RedactEmails([]byte(c.in))); got != c.in {
			t.Errorf("KeepingEmails().RedactEmails(%q) = %q; want it as sent", c.in, got)
		}
	}
	plain := []byte("no address here")
	if n := testing.AllocsPerRun(100, func() { p.RedactEmails(plain) }); n != 0 {
		t.Errorf("RedactEmails of a value without @ allocates %v times; want 0", n)
	}
}
