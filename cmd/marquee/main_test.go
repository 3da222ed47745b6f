package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"marquee"
	"marquee/fixture"
)

// TestMain runs the real main instead of the tests when a test starts this
// binary as a child process (MARQUEE_TEST_RUN_MAIN=1), e.g. to kill it.
//
// The tests here are whole servers that mostly wait — on their own
// instances, databases, brokers and browsers — so they run in parallel,
// defaultParallel at a time (not go test's GOMAXPROCS: 2 on a 2-core
// machine) unless -parallel says otherwise; the browser tests share
// one Chromium, maxBrowsers tabs at a time (newTab). Under the race detector every test is
// several times slower and busy, not waiting: two at a time, and one
// Chromium.
func TestMain(m *testing.M) {
	if os.Getenv("MARQUEE_TEST_RUN_MAIN") == "1" {
		main()
		return
	}
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(defaultParallel))
	}
	code := m.Run()
	if afterTests != nil {
		afterTests()
	}
	os.Exit(code)
}

// afterTests, when a test set it, is run once every test has ended: it
// stops the browser tests' shared Chromium (sharedBrowser).
var afterTests func()

// defaultParallel is how many tests of this package run at once.
var defaultParallel = map[bool]int{false: 8, true: 2}[raceDetector]

// instance is a marquee serve started through run() on port 0.
type instance struct {
	t     testing.TB
	url   string
	token string
	data  string
	log   *logTap // what it logged
	stop  func() error
}

// logTap collects log lines and reports the listening address.
type logTap struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	addr  chan string
	found bool
}

func (l *logTap) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.found {
		sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
		for sc.Scan() {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && strings.HasSuffix(rec.Msg, "listening") {
				l.found = true
				l.addr <- rec.Addr
			}
		}
	}
	return len(p), nil
}

func (l *logTap) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

// startWithin bounds an instance's start in a test: a hang, not a speed
// (many instances start at once here, MySQL's migrations take turns).
const startWithin = 2 * time.Minute

// start runs marquee serve on dataDir with extra flags and waits for /readyz.
func start(t testing.TB, dataDir string, env map[string]string, flags ...string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tap := &logTap{addr: make(chan string, 1)}
	// The invalid-traffic filter's rules of behaviour (docs/ivt.md) need a
	// person's pace: the tests of other features click, convert and decide
	// faster than a person does, so they are off unless a test turns them
	// on (ivt_test.go; later flags win).
	args := append([]string{"serve", "-addr", "127.0.0.1:0", "-data", dataDir, "-ivt-min-click-delay", "-1ns", "-ivt-min-conversion-delay", "-1ns",
		"-ivt-user-events", "-1", "-ivt-address-events", "-1"}, flags...)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, func(k string) string { return env[k] }, nil, io.Discard, tap) }()
	var addr string
	select {
	case addr = <-tap.addr:
	case err := <-done:
		cancel()
		t.Fatalf("run(%q) = %v before listening; log:\n%s", args, err, tap)
	case <-time.After(startWithin):
		cancel()
		t.Fatalf("run(%q) did not listen within %v; log:\n%s", args, startWithin, tap)
	}
	in := &instance{t: t, url: "http://" + addr, data: dataDir, log: tap}
	var once sync.Once
	var stopErr error
	in.stop = func() error {
		once.Do(func() { cancel(); stopErr = <-done })
		return stopErr
	}
	t.Cleanup(func() { in.stop() })
	if b, err := os.ReadFile(filepath.Join(dataDir, "admin-token")); err == nil {
		in.token = strings.TrimSpace(string(b))
	}
	for deadline := time.Now().Add(startWithin); time.Now().Before(deadline); {
		if r, err := http.Get(in.url + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return in
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("/readyz never answered 200; log:\n%s", tap)
	return nil
}

// startChild runs marquee serve on data in a child process (to be killed:
// the test owns cmd) with -insecure-admin and flags, and waits until it
// is ready; it returns its base URL.
func startChild(t *testing.T, data string, flags ...string) (base string, cmd *exec.Cmd) {
	t.Helper()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd = exec.Command(os.Args[0], append([]string{"serve", "-data", data, "-addr", addr, "-insecure-admin"}, flags...)...)
	cmd.Env = append(os.Environ(), "MARQUEE_TEST_RUN_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base = "http://" + addr
	eventually(t, startWithin, func() string {
		if r, err := http.Get(base + "/readyz"); err == nil && r.StatusCode == 200 {
			r.Body.Close()
			return ""
		}
		return "child never became ready"
	})
	return base, cmd
}

// killUnderLoad runs send from 8 goroutines, over and over, kills the
// child cmd with SIGKILL after d, and returns once every send has
// returned (send returns false once the child is gone).
func killUnderLoad(cmd *exec.Cmd, d time.Duration, send func() bool) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { repeat(stop, send) })
	}
	time.Sleep(d)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	close(stop)
	wg.Wait()
}

// repeat calls fn until stop is closed or fn returns false.
func repeat(stop <-chan struct{}, fn func() bool) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if !fn() {
			return
		}
	}
}

type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request; token "" sends no Authorization header.
func (in *instance) do(method, path, token, contentType, body string) response {
	in.t.Helper()
	if token == "" {
		return in.doHeaders(method, path, contentType, body)
	}
	return in.doHeaders(method, path, contentType, body, "Authorization", "Bearer "+token)
}

// doHeaders sends a request with header's pairs (name, value, …) and no
// credentials but those.
func (in *instance) doHeaders(method, path, contentType, body string, header ...string) response {
	in.t.Helper()
	req, err := http.NewRequest(method, in.url+path, strings.NewReader(body))
	if err != nil {
		in.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", iphoneUA) // a person's browser (a Go client is invalid traffic: docs/ivt.md), unless header says
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, string(b)}
}

// get sends a GET with the admin token and header (name, value, …).
func (in *instance) get(path string, header ...string) response {
	in.t.Helper()
	return in.doHeaders("GET", path, "", "", append([]string{"Authorization", "Bearer " + in.token}, header...)...)
}

// fire fires a tracking URL as a phone's browser does (an iPhone's
// User-Agent), without following its redirect, and returns the answer
// (its body read and closed).
func fire(t testing.TB, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", iphoneUA)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// noRedirects is a client that answers a redirect as it is.
var noRedirects = &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (in *instance) admin(method, path, body string) response {
	return in.do(method, path, in.token, "application/json", body)
}

func (in *instance) expect(r response, status int, body string) {
	in.t.Helper()
	if r.status != status || (body != "" && r.body != body) {
		in.t.Fatalf("got %d %s; want %d %s", r.status, r.body, status, body)
	}
}

// flightJSON is the startAt and endAt fields of a window from now+from
// to now+to, as a campaign's or an ad's JSON body writes them.
func flightJSON(from, to time.Duration) string {
	now := time.Now().UTC()
	return `"startAt":"` + now.Add(from).Format(time.RFC3339) + `","endAt":"` + now.Add(to).Format(time.RFC3339) + `"`
}

// campaign creates a campaign from body and approves it (a new campaign
// is a draft, which never serves), and returns its id.
func (in *instance) campaign(body string) string {
	in.t.Helper()
	id, _ := in.approvedCampaign(body)
	return id
}

// approvedCampaign is campaign, and says when the campaign was approved
// (its review's time): a flat or daily fee is billed from then.
func (in *instance) approvedCampaign(body string) (string, time.Time) {
	in.t.Helper()
	r := in.admin("POST", "/api/v1/campaigns", body)
	var c struct {
		ID     string
		Review struct{ At time.Time }
	}
	if r.status != 201 || json.Unmarshal([]byte(r.body), &c) != nil {
		in.t.Fatalf("POST /api/v1/campaigns %s: got %d %s; want 201", body, r.status, r.body)
	}
	r = in.admin("POST", "/api/v1/campaigns/"+c.ID+"/approve", "")
	if r.status != 200 || json.Unmarshal([]byte(r.body), &c) != nil || c.Review.At.IsZero() {
		in.t.Fatalf("approve campaign %s: got %d %s; want 200 with its review", c.ID, r.status, r.body)
	}
	return c.ID, c.Review.At
}

// feeFrom is what a fee of amount micro-units a period costs of [from,
// to), in whole seconds, in micro-units, rounded as money is: a flight's
// flat fee (period the flight) to the micro-unit once; a daily fee
// (period 24 h) to the nano-unit, then the micro-unit.
func feeFrom(amount int64, period time.Duration, from, to time.Time, daily bool) int64 {
	secs := float64(to.Sub(from) / time.Second)
	if daily {
		nanos := math.Round(float64(amount) * 1e3 * secs / period.Seconds())
		return int64(math.Floor((nanos + 500) / 1000))
	}
	return int64(math.Round(float64(amount) * secs / period.Seconds()))
}

// money is an amount of micro-units as the API writes it (2.5, 0.000001).
func money(micros int64) string { return strconv.FormatFloat(float64(micros)/1e6, 'f', -1, 64) }

func adBody(title string, start, end time.Time, conds string) string {
	s := fmt.Sprintf(`{"title":%q,"startAt":%q,"endAt":%q`, title, start.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano))
	if conds != "" {
		s += `,"conditions":` + conds
	}
	return s + "}"
}

func TestAdLifecycle(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	if len(in.token) != 64 {
		t.Fatalf("generated token %q; want 64 hex characters", in.token)
	}
	now := time.Now().UTC()
	end := now.Add(48 * time.Hour).Truncate(time.Millisecond)

	r := in.admin("POST", "/api/v1/ad", adBody("AD 1", now.Add(-time.Hour), end, `{"ageStart":20,"ageEnd":30,"country":["TW","JP"],"platform":["android","ios"]}`))
	in.expect(r, 201, `{"id":"1"}`)
	if loc := r.header.Get("Location"); loc != "/api/v1/ad/1" {
		t.Fatalf("Location = %q; want /api/v1/ad/1", loc)
	}
	in.expect(in.admin("POST", "/api/v1/ad", adBody("AD 2", now.Add(-time.Hour), end.Add(-time.Hour), "")), 201, `{"id":"2"}`)

	endStr := end.Format("2006-01-02T15:04:05.000Z")
	endStr2 := end.Add(-time.Hour).Format("2006-01-02T15:04:05.000Z")
	// Read-your-writes, endAt order, and unset dimensions match every value.
	in.expect(in.do("GET", "/api/v1/ad", "", "", ""), 200,
		`{"items":[{"title":"AD 2","endAt":"`+endStr2+`"},{"title":"AD 1","endAt":"`+endStr+`"}]}`)
	in.expect(in.do("GET", "/api/v1/ad?age=24&country=tw&platform=IOS&gender=F", "", "", ""), 200,
		`{"items":[{"title":"AD 2","endAt":"`+endStr2+`"},{"title":"AD 1","endAt":"`+endStr+`"}]}`)
	in.expect(in.do("GET", "/api/v1/ad?age=31", "", "", ""), 200, `{"items":[{"title":"AD 2","endAt":"`+endStr2+`"}]}`)
	in.expect(in.do("GET", "/api/v1/ad?offset=1&limit=1", "", "", ""), 200, `{"items":[{"title":"AD 1","endAt":"`+endStr+`"}]}`)
	in.expect(in.do("GET", "/api/v1/ad?offset=2", "", "", ""), 200, `{"items":[]}`)

	// Get by id is public and shows the whole ad.
	r = in.do("GET", "/api/v1/ad/1", "", "", "")
	in.expect(r, 200, "")
	var got map[string]any
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || got["id"] != "1" || got["title"] != "AD 1" || got["endAt"] != endStr {
		t.Fatalf("GET /api/v1/ad/1 = %s", r.body)
	}

	// Replace moves AD 1 out of age 24 and to the front.
	r = in.admin("PUT", "/api/v1/ad/1", adBody("AD 1b", now.Add(-time.Hour), end.Add(-2*time.Hour), `[{"ageStart":40}]`))
	in.expect(r, 200, "")
	endStr3 := end.Add(-2 * time.Hour).Format("2006-01-02T15:04:05.000Z")
	in.expect(in.do("GET", "/api/v1/ad", "", "", ""), 200,
		`{"items":[{"title":"AD 1b","endAt":"`+endStr3+`"},{"title":"AD 2","endAt":"`+endStr2+`"}]}`)
	in.expect(in.do("GET", "/api/v1/ad?age=24", "", "", ""), 200, `{"items":[{"title":"AD 2","endAt":"`+endStr2+`"}]}`)

	// Admin list sees scheduled and expired ads too.
	in.expect(in.admin("POST", "/api/v1/ad", adBody("later", now.Add(time.Hour), end, "")), 201, `{"id":"3"}`)
	r = in.admin("GET", "/api/v1/ads?state=scheduled", "")
	var page struct {
		Items []struct{ ID, Title string }
		Total int
	}
	if err := json.Unmarshal([]byte(r.body), &page); err != nil || page.Total != 1 || len(page.Items) != 1 || page.Items[0].Title != "later" {
		t.Fatalf("GET /api/v1/ads?state=scheduled = %d %s", r.status, r.body)
	}
	in.expect(in.admin("GET", "/api/v1/ads?state=soon", ""), 400,
		`{"error":"invalid query","problems":{"state":"must be one of all, active, scheduled, expired; got \"soon\""}}`)

	// Delete.
	in.expect(in.admin("DELETE", "/api/v1/ad/2", ""), 204, "")
	in.expect(in.admin("DELETE", "/api/v1/ad/2", ""), 404, `{"error":"ad 2 not found"}`)
	in.expect(in.do("GET", "/api/v1/ad/2", "", "", ""), 404, `{"error":"ad 2 not found"}`)
	in.expect(in.do("GET", "/api/v1/ad/abc", "", "", ""), 404, `{"error":"ad \"abc\" not found"}`)
	in.expect(in.admin("PUT", "/api/v1/ad/2", adBody("x", now, end, "")), 404, `{"error":"ad 2 not found"}`)
	in.expect(in.do("GET", "/api/v1/ad", "", "", ""), 200, `{"items":[{"title":"AD 1b","endAt":"`+endStr3+`"}]}`)

	// Restart keeps data and the token.
	if err := in.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	again := start(t, in.data, nil)
	if again.token != in.token {
		t.Fatalf("token after restart = %q; want %q", again.token, in.token)
	}
	again.expect(again.do("GET", "/api/v1/ad", "", "", ""), 200, `{"items":[{"title":"AD 1b","endAt":"`+endStr3+`"}]}`)
	again.expect(again.admin("POST", "/api/v1/ad", adBody("AD 4", now.Add(-time.Hour), end, "")), 201, `{"id":"4"}`)
}

func TestScheduledAdAppearsAtStartWithoutRefresh(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-insecure-admin")
	startAt := time.Now().Add(time.Second)
	endAt := startAt.Add(time.Second)
	in.expect(in.admin("POST", "/api/v1/ad", adBody("soon", startAt, endAt, "")), 201, "")
	in.expect(in.do("GET", "/api/v1/ad", "", "", ""), 200, `{"items":[]}`)
	time.Sleep(time.Until(startAt) + 50*time.Millisecond)
	r := in.do("GET", "/api/v1/ad", "", "", "")
	if !strings.Contains(r.body, `"soon"`) && time.Now().Before(endAt) {
		t.Fatalf("after startAt: %s; want the ad", r.body)
	}
	time.Sleep(time.Until(endAt) + 10*time.Millisecond)
	in.expect(in.do("GET", "/api/v1/ad", "", "", ""), 200, `{"items":[]}`)
}

func TestAuth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := start(t, dir, map[string]string{"MARQUEE_ADMIN_TOKEN": "s3cret"})
	if _, err := os.Stat(filepath.Join(dir, "admin-token")); err == nil {
		t.Fatal("a token file was written although a token was configured")
	}
	body := adBody("a", time.Now(), time.Now().Add(time.Hour), "")
	r := in.do("POST", "/api/v1/ad", "", "application/json", body)
	in.expect(r, 401, `{"error":"missing bearer token: send Authorization: Bearer <admin token>"}`)
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	for _, p := range []struct{ method, path string }{{"POST", "/api/v1/ad"}, {"PUT", "/api/v1/ad/1"}, {"DELETE", "/api/v1/ad/1"}, {"GET", "/api/v1/ads"}} {
		in.expect(in.do(p.method, p.path, "wrong", "application/json", body), 401, `{"error":"invalid bearer token"}`)
	}
	in.expect(in.do("POST", "/api/v1/ad", "s3cret", "application/json", body), 201, "")

	// The generated token file is private.
	dir2 := t.TempDir()
	in2 := start(t, dir2, nil)
	fi, err := os.Stat(filepath.Join(dir2, "admin-token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin-token file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	in2.expect(in2.admin("POST", "/api/v1/ad", body), 201, "")

	// -insecure-admin opens admin routes.
	in3 := start(t, t.TempDir(), nil, "-insecure-admin")
	in3.expect(in3.do("POST", "/api/v1/ad", "", "application/json", body), 201, "")
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	now := time.Now()
	in.expect(in.admin("POST", "/api/v1/ad", adBody("keep", now.Add(-time.Hour), now.Add(time.Hour), "")), 201, "")
	before := in.do("GET", "/api/v1/ad", "", "", "").body

	big := adBody(strings.Repeat("x", 70_000), now, now.Add(time.Hour), "")
	in.expect(in.admin("POST", "/api/v1/ad", big), 413, fmt.Sprintf(`{"error":"request body is %d bytes; the limit is 65536"}`, len(big)))
	in.expect(in.do("POST", "/api/v1/ad", in.token, "text/plain", "{}"), 415, `{"error":"content type \"text/plain\" is not JSON; send application/json"}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":`), 400, `{"error":"invalid ad","problems":{"body":"malformed JSON: unexpected end of JSON input"}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"t","startAt":"2023-12-10T03:00:00Z","endAt":"2023-12-11T03:00:00Z","conditions":{"country":["TW","XX"]}}`), 400,
		`{"error":"invalid ad","problems":{"conditions[0].country[1]":"unknown ISO 3166-1 alpha-2 code \"XX\""}}`)
	in.expect(in.admin("PUT", "/api/v1/ad/1", `{"title":""}`), 400, "")
	in.expect(in.do("GET", "/api/v1/ad?limit=0&offset=-1&age=abc&gender=X&country=XX&platform=tv", "", "", ""), 400,
		`{"error":"invalid query","problems":{"age":"must be an integer between 1 and 100","country":"unknown ISO 3166-1 alpha-2 code \"XX\"",`+
			`"gender":"must be \"M\" or \"F\", got \"X\"","limit":"must be an integer between 1 and 100","offset":"must be an integer ≥ 0","platform":"must be one of \"android\", \"ios\", \"web\", got \"tv\""}}`)
	in.expect(in.do("GET", "/api/v1/ad?limit=101", "", "", ""), 400, `{"error":"invalid query","problems":{"limit":"must be an integer between 1 and 100"}}`)
	in.expect(in.do("GET", "/api/v1/ad?unknown=1&limit=100", "", "", ""), 200, before)

	r := in.do("PATCH", "/api/v1/ad/1", in.token, "", "")
	in.expect(r, 405, "")
	if allow := r.header.Get("Allow"); allow != "DELETE, GET, HEAD, PUT" {
		t.Errorf("Allow = %q; want DELETE, GET, HEAD, PUT", allow)
	}
	in.expect(in.do("GET", "/nope", "", "", ""), 404, `{"error":"no route for \"/nope\""}`)
	// Over the server-wide limit: refused from the headers, before the body is read.
	conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/v1/ad HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 2<<20)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 413 {
		t.Fatalf("2 MiB body: %v, %v; want 413", resp, err)
	}
	conn.Close()

	// Nothing invalid was stored; the index is unchanged.
	in.expect(in.do("GET", "/api/v1/ad", "", "", ""), 200, before)
	r = in.admin("GET", "/api/v1/ads", "")
	if !strings.Contains(r.body, `"total":1`) {
		t.Fatalf("admin list after bad writes = %s; want one ad", r.body)
	}
}

// TestEmptyQueryValuesAreAbsent: the one rule of query parameters on
// every route — an empty value (as a client built from a struct sends an
// unset field) is the same as leaving the parameter out.
func TestEmptyQueryValuesAreAbsent(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	now := time.Now()
	in.expect(in.admin("POST", "/api/v1/ad", adBody("A", now.Add(-time.Hour), now.Add(time.Hour), `{"country":["TW"]}`)), 201, "")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com/x","code":"spring"}`), 201, "")
	day := now.UTC().Truncate(24 * time.Hour)
	window := "from=" + day.Add(-24*time.Hour).Format(time.RFC3339) + "&to=" + day.Format(time.RFC3339)
	for _, c := range []struct{ bare, empties string }{
		{"/api/v1/ad", "/api/v1/ad?age=&gender=&country=&platform=&offset=&limit="},
		{"/api/v1/ads", "/api/v1/ads?state=&q=&offset=&limit="},
		{"/api/v1/links", "/api/v1/links?q=&offset=&limit="},
		{"/api/v1/audit", "/api/v1/audit?limit=&offset=&from=&to=&actor=&entity="},
		{"/api/v1/ad/1/stats?" + window, "/api/v1/ad/1/stats?" + window + "&granularity=&by=&bots=&tz=&format="},
		{"/api/v1/links/spring/stats?" + window, "/api/v1/links/spring/stats?" + window + "&granularity=&by=&bots=&tz=&format="},
		{"/api/v1/stats?" + window, "/api/v1/stats?" + window + "&top=&metric=&limit=&granularity=&tz=&format="},
	} {
		bare := in.admin("GET", c.bare, "")
		if bare.status != 200 {
			t.Fatalf("GET %s = %d %s", c.bare, bare.status, bare.body)
		}
		if got := in.admin("GET", c.empties, ""); got.status != bare.status || got.body != bare.body {
			t.Errorf("GET %s = %d %s; want what GET %s answers: %d %s", c.empties, got.status, got.body, c.bare, bare.status, bare.body)
		}
	}
}

func TestOperations(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	in.expect(in.do("GET", "/healthz", "", "", ""), 200, `{"status":"ok"}`)
	in.expect(in.do("GET", "/readyz", "", "", ""), 200, `{"status":"ready","store":"up"}`)
	if r := in.do("HEAD", "/api/v1/ad", "", "", ""); r.status != 200 || r.body != "" {
		t.Errorf("HEAD /api/v1/ad = %d %q; want 200 and no body", r.status, r.body)
	}
	in.do("GET", "/api/v1/ad", "", "", "")
	r := in.do("GET", "/metrics", "", "", "")
	for _, want := range []string{
		`marquee_http_requests_total{method="GET",route="/api/v1/ad",status="200"} 2`,
		`marquee_http_request_duration_seconds_count{method="GET",route="/api/v1/ad"} 2`,
		`marquee_index_ads 0`, `marquee_index_builds_total 1`, `marquee_index_snapshot_age_seconds`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestFlagsAndEnv(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"serve", "-compact-every", "0s"}, nil, "-compact-every"},
		{[]string{"serve"}, map[string]string{"MARQUEE_INSECURE_ADMIN": "maybe"}, `MARQUEE_INSECURE_ADMIN="maybe"`},
		{[]string{"serve", "-db", "mongodb://x"}, nil, "want a SQLite file path, a postgres:// or a mysql:// URL"},
		{[]string{"serve", "-db", "mysql://u:hunter2@x"}, nil, "mysql: name the database: mysql://user:password@host:port/database"},
		{[]string{"serve", "-poll", "0s"}, nil, "-poll"},
		{[]string{"serve", "-remnant", "price"}, nil, `-remnant: remnant campaigns compete by "weight" or "ecpm", not "price"`},
		{[]string{"bogus"}, nil, `unknown command "bogus"`},
	} {
		// A data directory of the test's: serve writes its admin token
		// before it opens the store, and the default is ./data.
		getenv := func(k string) string {
			if k == "MARQUEE_DATA" {
				return t.TempDir()
			}
			return c.env[k]
		}
		err := run(context.Background(), c.args, getenv, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q, %v) = %v; want an error containing %q", c.args, c.env, err, c.want)
		}
	}
	// A database password never reaches an error (or a log).
	for _, db := range []string{"mongodb://u:hunter2@x/db", "mysql://u:hunter2@/db", "mysql://u:hunter2@127.0.0.1:1/db?timeout=100ms"} {
		err := run(context.Background(), []string{"serve", "-data", t.TempDir(), "-db", db}, func(string) string { return "" }, nil, io.Discard, io.Discard)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("serve -db %s = %v; want an error without the password", db, err)
		}
	}
}

// marquee seed stores the fixture's ads (whose determinism package
// fixture tests), mostly active.
func TestSeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"seed", "-data", dir, "-ads", "300", "-seed", "7"}, func(string) string { return "" }, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	in := start(t, dir, nil)
	r := in.admin("GET", "/api/v1/ads?limit=1", "")
	if !strings.Contains(r.body, `"total":300`) {
		t.Fatalf("after seeding 300: %s", r.body)
	}
	var list struct{ Items []any }
	json.Unmarshal([]byte(in.do("GET", "/api/v1/ad?limit=100", "", "", "").body), &list)
	if len(list.Items) < 100 {
		t.Fatalf("%d active ads among 300 seeded; want most active", len(list.Items))
	}
}

func TestHelloReplaysCapturedResponses(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-insecure-admin")
	now := time.Now()
	in.expect(in.admin("POST", "/api/v1/ad", adBody("AD <1>", now.Add(-time.Hour), now.Add(time.Hour), "")), 201, "")
	paths := []string{"/api/v1/ad", "/api/v1/ad?limit=1&age=30", "/api/v1/ad?offset=5"}
	file := filepath.Join(t.TempDir(), "paths")
	if err := os.WriteFile(file, []byte(strings.Join(paths, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tap := &logTap{addr: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"hello", "-addr", "127.0.0.1:0", "-capture", in.url, "-paths", file}, func(string) string { return "" }, nil, io.Discard, tap)
	}()
	var addr string
	select {
	case addr = <-tap.addr:
	case err := <-done:
		t.Fatalf("hello -capture: %v; log:\n%s", err, tap)
	case <-time.After(10 * time.Second):
		t.Fatal("hello -capture did not listen")
	}
	replay := &instance{t: t, url: "http://" + addr}
	for _, p := range paths {
		want := in.do("GET", p, "", "", "").body
		if got := replay.do("GET", p, "", "", ""); got.status != 200 || got.body != want {
			t.Errorf("replay of %s = %d %s; want 200 %s", p, got.status, got.body, want)
		}
	}
	replay.expect(replay.do("GET", "/api/v1/ad?limit=2", "", "", ""), 404, "")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("hello shutdown: %v", err)
	}
}

// TestSeededReportsAgree: seeded reports respect each ad's targeting (no
// row in a country it does not target), and a seeded link's click count
// equals its report's clicks.
func TestSeededReportsAgree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := run(context.Background(), []string{"seed", "-data", dir, "-ads", "20", "-links", "4", "-reports", "3"},
		func(string) string { return "" }, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	// -links without -ads seeds no ads: the 20 were asked for explicitly.
	in := start(t, dir, nil)
	window := "from=" + time.Now().Add(-5*24*time.Hour).UTC().Format(time.RFC3339) + "&to=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var ads struct {
		Items []struct {
			ID         string
			Conditions []marquee.Condition
		}
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/ads?limit=100", "").body), &ads)
	checked := 0
	for _, a := range ads.Items {
		allowed, open := map[string]bool{}, len(a.Conditions) == 0
		for _, c := range a.Conditions {
			open = open || len(c.Country) == 0
			for _, x := range c.Country {
				allowed[x] = true
			}
		}
		for _, p := range in.stats("/api/v1/ad/" + a.ID + "/stats?by=country&" + window).Breakdown {
			if !open && !allowed[p.Country] {
				t.Errorf("ad %s targets %v; its seeded report has %d impressions in %s", a.ID, a.Conditions, p.Impressions, p.Country)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatalf("no ad has a seeded report")
	}
	var links struct{ Items []struct{ Code string } }
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/links?limit=10", "").body), &links)
	if len(links.Items) != 4 {
		t.Fatalf("%d links; want 4", len(links.Items))
	}
	for _, l := range links.Items {
		var link struct{ Clicks int64 }
		json.Unmarshal([]byte(in.admin("GET", "/api/v1/links/"+l.Code, "").body), &link)
		rep := in.stats("/api/v1/links/" + l.Code + "/stats?" + window)
		if link.Clicks == 0 || link.Clicks != rep.Totals.Clicks {
			t.Errorf("link %s: %d clicks counted, its report %d; want the same, not 0", l.Code, link.Clicks, rep.Totals.Clicks)
		}
	}
}

// TestSeedCampaigns: seeding a catalog of campaigns makes the placements,
// advertisers and campaigns, and puts every ad in a campaign with a
// creative that fits its placement.
func TestSeedCampaigns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := run(context.Background(), []string{"seed", "-data", dir, "-campaigns", "20", "-ads", "200"}, func(string) string { return "" }, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	in := start(t, dir, nil)
	for path, want := range map[string]string{"/api/v1/campaigns?limit=1": `"total":20`, "/api/v1/advertisers?limit=1": `"total":2`, "/api/v1/placements": `"total":6`} {
		if r := in.admin("GET", path, ""); !strings.Contains(r.body, want) {
			t.Errorf("GET %s = %s; want %s", path, r.body, want)
		}
	}
	var raw struct {
		Items []struct {
			CampaignID string
			Creative   *marquee.Creative
			Placements []string
		}
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/ads?limit=200", "").body), &raw)
	if len(raw.Items) != 200 {
		t.Fatalf("%d ads; want 200", len(raw.Items))
	}
	placements := map[string]marquee.PlacementInput{}
	for _, p := range fixture.Placements {
		placements[p.Name] = p
	}
	for i, a := range raw.Items {
		if a.CampaignID == "" || a.Creative == nil || len(a.Placements) != 1 {
			t.Fatalf("ad %d = %+v; want a campaign, a creative and a placement", i, a)
		}
		p := placements[a.Placements[0]]
		if !p.Accepts(a.Creative) {
			t.Errorf("ad %d's %s creative %s does not fit placement %s (%v, %v)", i, a.Creative.Type, a.Creative.Size(), p.Name, p.Types, p.Sizes)
		}
	}
}
