package reportmail_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"marquee"
	"marquee/reportmail"
	"marquee/store/sqlite"
)

// inbox is an SMTP server run in-process (github.com/emersion/go-smtp)
// with STARTTLS: the messages it accepted, and whether it refuses them
// now (a 451, as a server that is down for a while answers).
type inbox struct {
	mu       sync.Mutex
	messages [][]byte
	rcpts    [][]string
	down     bool
	addr     string
	roots    *x509.CertPool
}

func (b *inbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{b: b}, nil }

type session struct {
	b  *inbox
	to []string
}

func (s *session) Reset()        { s.to = nil }
func (s *session) Logout() error { return nil }
func (s *session) Mail(string, *smtp.MailOptions) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if s.b.down {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	return nil
}
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error { s.to = append(s.to, to); return nil }
func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.messages, s.b.rcpts = append(s.b.messages, b), append(s.b.rcpts, s.to)
	return nil
}

// newInbox starts an SMTP server with STARTTLS on a certificate of its
// own (roots trusts it).
func newInbox(t *testing.T) *inbox {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	b := &inbox{roots: x509.NewCertPool()}
	b.roots.AddCert(cert)
	srv := smtp.NewServer(b)
	srv.Domain = "localhost"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.ErrorLog = nil
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return b
}

func (b *inbox) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.messages)
}

// attachment reads message i's subject and its attachment's name and
// text.
func (b *inbox) attachment(t *testing.T, i int) (subject, name, text string) {
	b.mu.Lock()
	raw := b.messages[i]
	b.mu.Unlock()
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.FileName() != "" {
			var rd io.Reader = p
			if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
				rd = base64.NewDecoder(base64.StdEncoding, p)
			}
			data, err := io.ReadAll(rd)
			if err != nil {
				t.Fatal(err)
			}
			subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
			if err != nil {
				t.Fatal(err)
			}
			return subject, p.FileName(), string(data)
		}
	}
	t.Fatalf("message %d has no attachment:\n%s", i, raw)
	return "", "", ""
}

// nextDSTChange is the first change of Paris's offset after from (its
// local midnight before), so that the test crosses one whenever it runs.
func nextDSTChange(t *testing.T, from time.Time) time.Time {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, paris)
	for range 400 {
		next := time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, paris)
		if next.Sub(day) != 24*time.Hour {
			return day
		}
		day = next
	}
	t.Fatal("no change of daylight saving time within 400 days")
	return time.Time{}
}

// A daily schedule at 06:00 in Paris, run by a clock that steps a
// quarter of an hour at a time from two days before a change of daylight
// saving time to three after, by two schedulers (two instances): one
// email a day, at 06:00 local, each holding its local day (23 or 25
// hours on the day of the change); an outage of the mail server is
// retried with backoff and logged, and its period is sent once.
func TestScheduleAcrossDST(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	box := newInbox(t)
	change := nextDSTChange(t, time.Now().Add(5*24*time.Hour))
	paris := change.Location()
	sched := &marquee.Schedule{Every: marquee.Daily, At: "06:00", TimeZone: "Europe/Paris", Format: "csv", To: []string{"ana@example.com", "bo@example.com"}}
	saved, err := st.CreateSavedReport(ctx, marquee.SavedReport{Name: "Daily delivery", Query: "by=campaign", Schedule: sched, Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	sender, err := reportmail.NewSMTP("smtp://"+box.addr, "reports@example.com", &tls.Config{RootCAs: box.roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	render := renderFunc(func(_ context.Context, r marquee.SavedReport, from, to time.Time, format string) (reportmail.Attachment, error) {
		return reportmail.Attachment{Name: "report.csv", ContentType: "text/csv",
			Data: []byte("from,to,hours\n" + from.UTC().Format(time.RFC3339) + "," + to.UTC().Format(time.RFC3339) + "," + to.Sub(from).String() + "\n")}, nil
	})
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	instances := []*reportmail.Scheduler{
		{Store: st, Reports: render, Mailer: sender, Now: clock, Log: log},
		{Store: st, Reports: render, Mailer: sender, Now: clock, Log: log},
	}
	// From 07:00 two days before the change: the first tick sends that
	// day's email (due at 06:00, after the report was saved).
	start := time.Date(change.Year(), change.Month(), change.Day()-2, 7, 0, 0, 0, paris)
	end := time.Date(change.Year(), change.Month(), change.Day()+4, 0, 0, 0, 0, paris)
	outageDay := time.Date(change.Year(), change.Month(), change.Day()+2, 0, 0, 0, 0, paris)
	for at := start; at.Before(end); at = at.Add(15 * time.Minute) {
		mu.Lock()
		now = at
		mu.Unlock()
		local := at.In(paris)
		box.mu.Lock()
		// The server is down from 05:30 to 06:40 two days after the change.
		box.down = local.Year() == outageDay.Year() && local.YearDay() == outageDay.YearDay() && (local.Hour() == 5 && local.Minute() >= 30 || local.Hour() == 6 && local.Minute() < 40)
		box.mu.Unlock()
		for _, s := range instances {
			if err := s.Tick(ctx); err != nil {
				t.Fatalf("tick at %s: %v", at, err)
			}
		}
	}
	if saved.UpdatedAt.After(start) {
		t.Fatalf("the report was saved at %s, after the clock's start %s", saved.UpdatedAt, start)
	}
	// Six days, six emails: each day's at 06:00 (the first at the first
	// tick; 07:00, after the outage, on the day of the outage).
	if n := box.count(); n != 6 {
		t.Fatalf("%d emails over six days; want 6 (one a day)", n)
	}
	for i := range 6 {
		subject, name, text := box.attachment(t, i)
		day := time.Date(start.Year(), start.Month(), start.Day()+i-1, 0, 0, 0, 0, paris)
		next := time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, paris)
		want := day.UTC().Format(time.RFC3339) + "," + next.UTC().Format(time.RFC3339) + "," + next.Sub(day).String()
		if name != "report.csv" || !strings.Contains(text, want) || !strings.Contains(subject, day.Format("2 Jan 2006")) ||
			!strings.HasPrefix(subject, `Marquee report "Daily delivery": `) { // the saver's text, quoted
			t.Errorf("email %d: %q, %s:\n%s\nwant the local day %s (%s)", i, subject, name, text, day.Format("2 Jan"), want)
		}
		if !strings.Contains(text, "23h0m0s") && !strings.Contains(text, "25h0m0s") && day.Equal(change) {
			t.Errorf("the day of the change: %s; want 23 or 25 hours", text)
		}
		if got := box.rcpts[i]; len(got) != 2 {
			t.Errorf("email %d to %v; want both recipients", i, got)
		}
	}
	dels, err := st.ReportDeliveries(ctx, saved.ID, 10)
	if err != nil || len(dels) != 6 {
		t.Fatalf("delivery log = %+v, %v; want 6", dels, err)
	}
	for _, d := range dels {
		wantAttempts := 1
		if d.To.Equal(outageDay) {
			wantAttempts = 4 // 06:00, 06:15 and 06:30 refused (451; then 1, 4 and 16 minutes' backoff), 07:00 sent
		}
		if d.Status != marquee.DeliverySent || d.Attempts != wantAttempts || d.SentAt == nil {
			t.Errorf("delivery %+v; want sent after %d attempt(s)", d, wantAttempts)
		}
	}
	if !strings.Contains(logs.String(), "report email not sent") || !strings.Contains(logs.String(), "451") {
		t.Errorf("the outage was not logged: %s", logs.String())
	}
}

// A server that never answers well: the period is given up after the
// last attempt, and never sent later.
func TestScheduleGivesUp(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	box := newInbox(t)
	box.down = true
	sched := &marquee.Schedule{Every: marquee.Weekly, Weekday: "monday", At: "08:00", TimeZone: "UTC", Format: "csv", To: []string{"ana@example.com"}}
	saved, err := st.CreateSavedReport(ctx, marquee.SavedReport{Name: "Weekly", Query: "by=campaign", Schedule: sched, Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	sender, _ := reportmail.NewSMTP("smtp://"+box.addr, "reports@example.com", &tls.Config{RootCAs: box.roots, ServerName: "127.0.0.1"})
	// A minute past the first Monday 08:00 a week or more after the save:
	// one period is due, and the next is six days and more away — past
	// the 31 hours below, whatever the day the test runs on (it counted
	// 8 days from the save, and the next due fell in the hours below when
	// run early on a Saturday).
	now := saved.UpdatedAt.Add(7 * 24 * time.Hour).UTC()
	now = time.Date(now.Year(), now.Month(), now.Day(), 8, 1, 0, 0, time.UTC)
	for now.Weekday() != time.Monday || now.Before(saved.UpdatedAt.Add(7*24*time.Hour)) {
		now = now.AddDate(0, 0, 1)
	}
	s := &reportmail.Scheduler{Store: st, Mailer: sender, Now: func() time.Time { return now },
		Reports: renderFunc(func(context.Context, marquee.SavedReport, time.Time, time.Time, string) (reportmail.Attachment, error) {
			return reportmail.Attachment{Name: "r.csv", ContentType: "text/csv", Data: []byte("x\n")}, nil
		})}
	for range 30 { // a day and more, an hour at a time
		if err := s.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
	}
	box.mu.Lock()
	box.down = false
	box.mu.Unlock()
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	dels, _ := st.ReportDeliveries(ctx, saved.ID, 10)
	if len(dels) != 1 || dels[0].Status != marquee.DeliveryFailed || dels[0].Attempts != marquee.MaxDeliveryAttempts || box.count() != 0 {
		t.Fatalf("deliveries %+v, %d sent; want one failed after %d attempts, never sent", dels, box.count(), marquee.MaxDeliveryAttempts)
	}
}

// -smtp's URLs: STARTTLS by default, TLS with smtps, no TLS only to a
// loopback relay; a password never shows in an error.
func TestSMTPURLs(t *testing.T) {
	for _, tc := range []struct {
		url, from string
		ok        bool
	}{
		{"smtp://user:secret@mail.example.com:587", "r@example.com", true},
		{"smtps://user:secret@mail.example.com", "r@example.com", true},
		{"smtp://127.0.0.1:2525?tls=none", "r@example.com", true},
		{"smtp://mail.example.com:25?tls=none", "r@example.com", false},
		{"http://user:secret@mail.example.com", "r@example.com", false},
		{"smtp://mail.example.com:587", "", false},
		{"smtp://mail.example.com:99999", "r@example.com", false},
	} {
		_, err := reportmail.NewSMTP(tc.url, tc.from, nil)
		if (err == nil) != tc.ok || err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("NewSMTP(%q, %q) = %v; want ok %v, never the password", tc.url, tc.from, err, tc.ok)
		}
	}
}

// renderFunc is a reportmail.Renderer of a function.
type renderFunc func(ctx context.Context, r marquee.SavedReport, from, to time.Time, format string) (reportmail.Attachment, error)

func (f renderFunc) Render(ctx context.Context, r marquee.SavedReport, from, to time.Time, format string) (reportmail.Attachment, error) {
	return f(ctx, r, from, to, format)
}
