// Package macro fills the macros of third-party tags and trackers —
// {random}, {timestamp}, {pageUrl}, {clickUrl}, {clickUrlEnc}, {gdpr},
// {gdprConsent}, {placement}, {campaign}, {ad} — escaped for where they
// stand: in a URL, each value query-escaped (but {clickUrl}, a whole URL
// of its own, which a tracker places where a URL goes); in HTML, each
// value HTML-escaped (and {clickUrlEnc} query-escaped first). A hostile
// value (a page URL, a consent string) can then never end the attribute,
// element or query part it stands in. Unknown braces are left as they are.
package macro

import (
	"html"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Context is where a template's text goes: a URL or HTML.
type Context int

// The contexts.
const (
	URL Context = iota
	HTML
)

// Values are what the macros stand for in one decision.
type Values struct {
	Random      uint64
	Timestamp   time.Time
	PageURL     string
	ClickURL    string // the decision's signed click URL
	GDPR        string // "1", "0" or "" (unknown)
	GDPRConsent string // the TCF string
	Placement   string
	Campaign    int64
	Ad          int64
}

// Expand appends tmpl to dst with its macros filled from v, escaped for
// c.
func Expand(dst []byte, tmpl string, v *Values, c Context) []byte {
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			return append(dst, tmpl...)
		}
		dst = append(dst, tmpl[:i]...)
		tmpl = tmpl[i:]
		j := strings.IndexByte(tmpl, '}')
		if j < 0 {
			return append(dst, tmpl...)
		}
		val, raw, ok := v.value(tmpl[:j+1])
		if !ok {
			dst = append(dst, '{')
			tmpl = tmpl[1:]
			continue
		}
		dst = escape(dst, val, raw, c)
		tmpl = tmpl[j+1:]
	}
}

// value is what macro name stands for in v; raw says it goes in as it is
// in a URL (a whole URL: {clickUrl}).
func (v *Values) value(name string) (val string, raw, ok bool) {
	switch name {
	case "{random}":
		return strconv.FormatUint(v.Random, 10), false, true
	case "{timestamp}":
		return strconv.FormatInt(v.Timestamp.UnixMilli(), 10), false, true
	case "{pageUrl}":
		return v.PageURL, false, true
	case "{clickUrl}":
		return v.ClickURL, true, true
	case "{clickUrlEnc}":
		return url.QueryEscape(v.ClickURL), true, true
	case "{gdpr}":
		return v.GDPR, false, true
	case "{gdprConsent}":
		return v.GDPRConsent, false, true
	case "{placement}":
		return v.Placement, false, true
	case "{campaign}":
		return strconv.FormatInt(v.Campaign, 10), false, true
	case "{ad}":
		return strconv.FormatInt(v.Ad, 10), false, true
	}
	return "", false, false
}

// escape appends val for context c: raw values go into a URL as they
// are; in HTML every value is HTML-escaped.
func escape(dst []byte, val string, raw bool, c Context) []byte {
	if c == HTML {
		return append(dst, html.EscapeString(val)...)
	}
	if raw {
		return append(dst, val...)
	}
	return append(dst, url.QueryEscape(val)...)
}
