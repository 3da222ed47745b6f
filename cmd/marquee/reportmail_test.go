package main

import (
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// mailbox is an SMTP server run in-process (a relay on this machine):
// the raw messages it accepted.
type mailbox struct {
	mu   sync.Mutex
	msgs []string
}

func (m *mailbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &mailSession{m}, nil }

type mailSession struct{ m *mailbox }

func (s *mailSession) Reset()                               {}
func (s *mailSession) Logout() error                        { return nil }
func (s *mailSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *mailSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	s.m.mu.Lock()
	s.m.msgs = append(s.m.msgs, string(b))
	s.m.mu.Unlock()
	return err
}

func startMailbox(t *testing.T) (*mailbox, string) {
	m := &mailbox{}
	srv := smtp.NewServer(m)
	srv.Domain, srv.AllowInsecureAuth = "localhost", true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m, ln.Addr().String()
}

// TestSavedReportsByEmail: a saved report with a schedule, sent now
// through the server's -smtp: one email with the report of the period
// attached (as its schedule's format), logged as sent; the same period
// is not sent twice; an advertiser's account sees only the reports saved
// in its world; without -smtp, sending is a 503.
func TestSavedReportsByEmail(t *testing.T) {
	t.Parallel()
	box, addr := startMailbox(t)
	in := start(t, t.TempDir(), nil, "-smtp", "smtp://"+addr+"?tls=none", "-smtp-from", "reports@marquee.test")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	for _, bad := range []string{`{"name":"x","query":"by=planet"}`, `{"name":"x","query":"by=campaign&from=2026-01-01T00:00:00Z"}`,
		`{"name":"x","query":"by=campaign","schedule":{"every":"hourly","to":["a@example.com"]}}`,
		`{"name":"x","query":"by=campaign","schedule":{"every":"daily","timeZone":"Mars/Olympus","to":["a@example.com"]}}`,
		`{"name":"x","query":"by=campaign","schedule":{"every":"weekly","to":["not an address"]}}`} {
		if r := in.admin("POST", "/api/v1/saved-reports", bad); r.status != 400 {
			t.Errorf("POST /api/v1/saved-reports %s = %d %s; want 400", bad, r.status, r.body)
		}
	}
	r := in.admin("POST", "/api/v1/saved-reports", `{"name":"Campaigns by day","query":"by=campaign&granularity=day",
		"schedule":{"every":"daily","at":"00:00","timeZone":"Europe/Paris","format":"xlsx","to":["Ana@Example.com","bo@example.com"]}}`)
	var saved struct {
		ID       string
		Schedule struct {
			To     []string
			Format string
		}
	}
	if json.Unmarshal([]byte(r.body), &saved); r.status != 201 || saved.Schedule.To[0] != "ana@example.com" || saved.Schedule.Format != "xlsx" {
		t.Fatalf("save = %d %s", r.status, r.body)
	}
	sent := in.admin("POST", "/api/v1/saved-reports/"+saved.ID+"/send", "")
	var d struct {
		Status   string
		Attempts int
		From, To time.Time
	}
	if json.Unmarshal([]byte(sent.body), &d); sent.status != 200 || d.Status != "sent" || d.Attempts != 1 || d.To.Sub(d.From) < 23*time.Hour {
		t.Fatalf("send = %d %s; want sent, a day's report", sent.status, sent.body)
	}
	box.mu.Lock()
	msgs := append([]string{}, box.msgs...)
	box.mu.Unlock()
	if len(msgs) != 1 || !strings.Contains(msgs[0], `filename="report.xlsx"`) || !strings.Contains(msgs[0], "Campaigns by day") ||
		!strings.Contains(msgs[0], "ana@example.com") || !strings.Contains(msgs[0], "From: <reports@marquee.test>") {
		t.Fatalf("mails = %q; want one, from -smtp-from, to both, with the report as XLSX", msgs)
	}
	if again := in.admin("POST", "/api/v1/saved-reports/"+saved.ID+"/send", ""); again.status != 409 {
		t.Errorf("sending the same period again = %d %s; want 409", again.status, again.body)
	}
	log := in.admin("GET", "/api/v1/saved-reports/"+saved.ID+"/deliveries", "")
	if !strings.Contains(log.body, `"status":"sent"`) || strings.Count(log.body, `"status"`) != 1 {
		t.Errorf("deliveries = %s; want the one sent", log.body)
	}
	// An advertiser's account: its own saved reports only.
	key := func(body string) string {
		r := in.admin("POST", "/api/v1/keys", body)
		var k struct{ Key string }
		json.Unmarshal([]byte(r.body), &k)
		return k.Key
	}
	acme := key(`{"name":"acme","scopes":["reports:read"],"advertisers":[1]}`)
	if r := in.do("GET", "/api/v1/saved-reports/"+saved.ID, acme, "", ""); r.status != 404 {
		t.Errorf("the team's saved report read by an advertiser's key = %d %s; want 404", r.status, r.body)
	}
	if r := in.do("POST", "/api/v1/saved-reports", acme, "application/json", `{"name":"mine","query":"by=placement"}`); r.status != 400 {
		t.Errorf("an advertiser's saved report by placement = %d %s; want 400 (the publisher's side)", r.status, r.body)
	}
	in.expect(in.do("POST", "/api/v1/saved-reports", acme, "application/json", `{"name":"mine","query":"by=campaign"}`), 201, "")
	if r := in.do("GET", "/api/v1/saved-reports", acme, "", ""); strings.Count(r.body, `"name"`) != 1 || !strings.Contains(r.body, `"mine"`) {
		t.Errorf("an advertiser's list = %s; want its own report only", r.body)
	}
	if r := in.admin("GET", "/api/v1/saved-reports", ""); strings.Count(r.body, `"name"`) != 2 {
		t.Errorf("the team's list = %s; want both", r.body)
	}

	plain := start(t, t.TempDir(), nil)
	plain.expect(plain.admin("POST", "/api/v1/saved-reports", `{"name":"x","query":"by=campaign","schedule":{"every":"daily","to":["a@example.com"]}}`), 201, "")
	if r := plain.admin("POST", "/api/v1/saved-reports/1/send", ""); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Errorf("send without -smtp = %d %s; want 503 with Retry-After", r.status, r.body)
	}
}
