package supply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/publicsuffix"

	"marquee"
)

// Defaults of a Checker.
const (
	DefaultAdsTxtURL = "https://{domain}/ads.txt" // -ads-txt-url
	AdsTxtTimeout    = 5 * time.Second            // a fetch, redirects included
	AdsTxtMaxBytes   = 1 << 20                    // a file larger is an error
	maxRedirects     = 10
)

// Checker fetches publishers' ads.txt files and checks that they
// authorise the network (docs/api.md#sellers-and-adstxt). It is safe for
// concurrent use.
type Checker struct {
	network  Network
	template string
	client   *http.Client
}

// CheckerConfig configures a Checker.
type CheckerConfig struct {
	Network Network
	// URL is where a domain's file is ({domain} replaced; default
	// DefaultAdsTxtURL). Only its host part comes from a site: never from
	// a request.
	URL string
	// Forbidden refuses to connect to an address (loopback, private, …:
	// webhooks.Forbidden), so that a domain that resolves inside the
	// network reaches nothing there; nil connects anywhere (tests).
	Forbidden func(netip.Addr) bool
	// DialContext connects (nil: a net.Dialer with Forbidden's check).
	// Tests use it to reach their own server whatever the host.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// ErrForbiddenAddress is a fetch refused because its address is one
// CheckerConfig.Forbidden forbids.
var ErrForbiddenAddress = errors.New("the domain resolves to an address that is not public")

// NewChecker returns a Checker.
func NewChecker(cfg CheckerConfig) *Checker {
	c := &Checker{network: cfg.Network, template: cfg.URL}
	if c.template == "" {
		c.template = DefaultAdsTxtURL
	}
	dialer := &net.Dialer{Timeout: AdsTxtTimeout}
	if cfg.Forbidden != nil {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || cfg.Forbidden(ap.Addr()) {
				return ErrForbiddenAddress
			}
			return nil
		}
	}
	dial := dialer.DialContext
	if cfg.DialContext != nil {
		dial = cfg.DialContext
	}
	c.client = &http.Client{
		Timeout:   AdsTxtTimeout,
		Transport: &http.Transport{DialContext: dial, TLSHandshakeTimeout: AdsTxtTimeout, ResponseHeaderTimeout: AdsTxtTimeout, MaxIdleConns: 10, IdleConnTimeout: 30 * time.Second},
		// The specification's redirects: any number within the original
		// root domain, and one hop outside it, after which any redirect
		// is an error; http and https only.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("a redirect to %s: only http and https", req.URL.Scheme)
			}
			root := rootOf(via[0].URL.Hostname())
			for _, prev := range via[1:] {
				if rootOf(prev.URL.Hostname()) != root {
					return fmt.Errorf("a redirect from %s, itself reached by a redirect outside %s", prev.URL.Host, root)
				}
			}
			return nil
		},
	}
	return c
}

// rootOf is a host's root domain: its public suffix and one label more
// (the host itself where it has none, or is an address).
func rootOf(host string) string {
	if _, err := netip.ParseAddr(host); err == nil {
		return host
	}
	if r, err := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(host)); err == nil {
		return r
	}
	return strings.ToLower(host)
}

// Check checks each of the site's domains, as the specification has a
// crawler read them: a subdomain's own file only when its root domain's
// file names it (SUBDOMAIN=), else the root domain's. The site's status
// is its best domain's (authorized, then notListed, missing, error); a
// site without domains is missing.
func (c *Checker) Check(ctx context.Context, s marquee.Site, now time.Time) marquee.AdsTxtCheck {
	out := marquee.AdsTxtCheck{Status: marquee.AdsTxtMissing, CheckedAt: now, Domains: []marquee.AdsTxtDomain{}}
	files := map[string]fileResult{} // by the host fetched: a site's domains often share a root
	fetch := func(host string) fileResult {
		if r, ok := files[host]; ok {
			return r
		}
		r := c.fetch(ctx, host)
		files[host] = r
		return r
	}
	rank := []marquee.AdsTxtStatus{marquee.AdsTxtAuthorized, marquee.AdsTxtNotListed, marquee.AdsTxtMissing, marquee.AdsTxtError}
	for i, d := range s.Domains {
		r := fetch(rootOf(d))
		if root := rootOf(d); d != root && r.status == marquee.AdsTxtNotListed && slices.Contains(r.file.Subdomains(), d) {
			r = fetch(d)
		}
		dc := marquee.AdsTxtDomain{Domain: d, Status: r.status, Error: r.err}
		if r.status == marquee.AdsTxtNotListed {
			if rec, ok := r.file.Find(c.network.Domain, s.SellerID); ok {
				dc.Status, dc.Line = marquee.AdsTxtAuthorized, r.lines[rec.Line-1]
			}
		}
		out.Domains = append(out.Domains, dc)
		if i == 0 || slices.Index(rank, dc.Status) < slices.Index(rank, out.Status) {
			out.Status = dc.Status
		}
	}
	return out
}

// fileResult is a host's file, read: notListed with the file, missing,
// or error with why.
type fileResult struct {
	status marquee.AdsTxtStatus
	file   AdsTxt
	lines  []string // the file's lines as written (trimmed), for the record found
	err    string
}

// fetch reads host's ads.txt.
func (c *Checker) fetch(ctx context.Context, host string) fileResult {
	fail := func(format string, a ...any) fileResult {
		return fileResult{status: marquee.AdsTxtError, err: fmt.Sprintf(format, a...)}
	}
	u := strings.ReplaceAll(c.template, "{domain}", url.PathEscape(host))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fail("%v", err)
	}
	req.Header.Set("User-Agent", "Marquee-ads.txt-check (+https://"+c.network.Domain+"/sellers.json)")
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fail("%s: %v", u, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return fileResult{status: marquee.AdsTxtMissing, err: fmt.Sprintf("%s: %d", resp.Request.URL, resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return fail("%s: %d", resp.Request.URL, resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "text/plain" {
		return fail("%s: Content-Type %q, not text/plain", resp.Request.URL, resp.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, AdsTxtMaxBytes+1))
	if err != nil {
		return fail("%s: %v", resp.Request.URL, err)
	}
	if len(body) > AdsTxtMaxBytes {
		return fail("%s: larger than %d bytes", resp.Request.URL, AdsTxtMaxBytes)
	}
	text := strings.ReplaceAll(strings.ReplaceAll(strings.TrimPrefix(string(body), "\ufeff"), "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(text, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return fileResult{status: marquee.AdsTxtNotListed, file: ParseAdsTxt(body), lines: lines}
}
