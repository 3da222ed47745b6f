package supply_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"marquee"
	"marquee/supply"
)

// TestCheck: a check against a local server that answers for every
// host, as publishers' servers do: each status, the specification's
// redirects (within the root domain, one hop outside, not two), its
// subdomain referrals, and the site's status from its best domain.
func TestCheck(t *testing.T) {
	const ours = "ads.example.net, 7, DIRECT\n"
	files := map[string]func(w http.ResponseWriter, r *http.Request){
		"authorized.example": text("# a publisher\ngoogle.com, pub-1, DIRECT\n" + strings.ToUpper(ours)),
		"other.example":      text("ads.example.net, 8, DIRECT\ngoogle.com, pub-1, DIRECT\n"),
		"missing.example":    func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
		"broken.example":     func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", http.StatusServiceUnavailable) },
		"html.example": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>" + ours))
		},
		"huge.example": text(ours + strings.Repeat("# padding\n", supply.AdsTxtMaxBytes/10+1)),
		// www. → the root (within the root domain), then one hop to a CDN.
		"moved.example":     redirect("http://www.moved.example/ads.txt"),
		"www.moved.example": redirect("http://cdn.example/moved/ads.txt"),
		"cdn.example":       text(ours),
		// one hop outside, then another: an error.
		"far.example":    redirect("http://hop1.example/ads.txt"),
		"hop1.example":   redirect("http://hop2.example/ads.txt"),
		"hop2.example":   text(ours),
		"parent.example": text("SUBDOMAIN=m.parent.example\ngoogle.com, pub-1, DIRECT\n"),
		// the subdomain's own file, named by its root's
		"m.parent.example": text(ours),
		// a subdomain its root does not name: its own file is not read
		"x.parent.example": text(ours),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		if f, ok := files[host]; ok {
			f(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	c := supply.NewChecker(supply.CheckerConfig{Network: supply.Network{Domain: "ads.example.net"}, URL: "http://{domain}/ads.txt",
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
		}})
	now := time.Now()
	for _, tc := range []struct {
		domains []string
		want    marquee.AdsTxtStatus
		domain  []marquee.AdsTxtStatus
		error   string // in the first domain's error
	}{
		{[]string{"authorized.example"}, marquee.AdsTxtAuthorized, []marquee.AdsTxtStatus{marquee.AdsTxtAuthorized}, ""},
		{[]string{"other.example"}, marquee.AdsTxtNotListed, []marquee.AdsTxtStatus{marquee.AdsTxtNotListed}, ""},
		{[]string{"missing.example"}, marquee.AdsTxtMissing, []marquee.AdsTxtStatus{marquee.AdsTxtMissing}, "404"},
		{[]string{"broken.example"}, marquee.AdsTxtError, []marquee.AdsTxtStatus{marquee.AdsTxtError}, "503"},
		{[]string{"html.example"}, marquee.AdsTxtError, []marquee.AdsTxtStatus{marquee.AdsTxtError}, "not text/plain"},
		{[]string{"huge.example"}, marquee.AdsTxtError, []marquee.AdsTxtStatus{marquee.AdsTxtError}, "larger than"},
		{[]string{"moved.example"}, marquee.AdsTxtAuthorized, []marquee.AdsTxtStatus{marquee.AdsTxtAuthorized}, ""},
		{[]string{"far.example"}, marquee.AdsTxtError, []marquee.AdsTxtStatus{marquee.AdsTxtError}, "outside"},
		{[]string{"m.parent.example", "x.parent.example"}, marquee.AdsTxtAuthorized, []marquee.AdsTxtStatus{marquee.AdsTxtAuthorized, marquee.AdsTxtNotListed}, ""},
		{[]string{"broken.example", "missing.example", "other.example"}, marquee.AdsTxtNotListed,
			[]marquee.AdsTxtStatus{marquee.AdsTxtError, marquee.AdsTxtMissing, marquee.AdsTxtNotListed}, "503"},
		{nil, marquee.AdsTxtMissing, nil, ""},
	} {
		got := c.Check(context.Background(), marquee.Site{Name: "s", SellerID: "7", Domains: tc.domains}, now)
		var statuses []marquee.AdsTxtStatus
		for _, d := range got.Domains {
			statuses = append(statuses, d.Status)
		}
		if got.Status != tc.want || !equal(statuses, tc.domain) || !got.CheckedAt.Equal(now) ||
			(tc.error != "" && !strings.Contains(got.Domains[0].Error, tc.error)) {
			t.Errorf("Check(%v) = %+v; want %s, domains %v, error with %q", tc.domains, got, tc.want, tc.domain, tc.error)
		}
		if tc.want == marquee.AdsTxtAuthorized && got.Domains[0].Line == "" {
			t.Errorf("Check(%v) names no line", tc.domains)
		}
	}
	// A domain that resolves to a loopback address reaches nothing.
	safe := supply.NewChecker(supply.CheckerConfig{Network: supply.Network{Domain: "ads.example.net"}, URL: srv.URL + "/ads.txt?d={domain}",
		Forbidden: func(a netip.Addr) bool { return a.IsLoopback() }})
	got := safe.Check(context.Background(), marquee.Site{Name: "s", SellerID: "7", Domains: []string{"authorized.example"}}, now)
	if got.Status != marquee.AdsTxtError || !strings.Contains(got.Domains[0].Error, "not public") {
		t.Errorf("a check of a loopback address = %+v; want an error", got)
	}
}

func text(body string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(body))
	}
}

func redirect(to string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusMovedPermanently) }
}

func equal(a, b []marquee.AdsTxtStatus) bool {
	return strings.Join(statusStrings(a), ",") == strings.Join(statusStrings(b), ",")
}

func statusStrings(s []marquee.AdsTxtStatus) (out []string) {
	for _, x := range s {
		out = append(out, string(x))
	}
	return out
}
