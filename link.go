package marquee

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits and defaults of links.
const (
	MaxCodeLen       = 64 // bytes of a custom code
	GeneratedCodeLen = 7  // characters of a generated code: 55^7 ≈ 1.5e12 codes
	DefaultRedirect  = 302
)

// CodeAlphabet is what generated codes are made of: letters and digits
// without the ones a reader confuses (0/O/o, 1/l/I/i).
const CodeAlphabet = "23456789abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"

// ReservedCodes are refused as custom codes: they name, or may one day
// name, Marquee's own paths, or read as something else in a shared link.
var ReservedCodes = []string{
	"admin", "api", "assets", "e", "export", "f", "favicon", "health", "healthz", "import", "links",
	"login", "logout", "metrics", "r", "readyz", "robots", "static", "t", "tag", "vast", "www",
}

// Redirects are the statuses a link may answer with.
var Redirects = []int{301, 302, 307, 308}

// Link is a short link: GET /r/{Code} redirects to URL with status
// Redirect, until ExpiresAt (zero: never) or until it has been followed
// MaxClicks times (0: no limit). A Link value is never mutated once it
// leaves the store; share it freely.
type Link struct {
	ID           int64  // the store's key; the changelog names links by it and by Code
	Domain       string // "" for the default domain (see LinkKey)
	Code         string
	URL          string // where a visitor goes whom no rule takes, when the link has no destinations
	Title        string
	Tags         []string
	Rules        []LinkRule    // tried in order before URL or Destinations; the first that matches wins
	Destinations []Destination // the A/B split of the visitors no rule takes (none: URL)
	ExpiresAt    time.Time
	MaxClicks    int64
	Redirect     int
	AdID         int64 // the ad the link tracks clicks for; 0: none
	Clicks       int64 // redirects counted in the store (see the click counter)
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Clicks are redirects of one link counted in memory, to be added to the
// store: by LinkID (a code may be deleted and created again), with the
// code the changelog names it by.
type Clicks struct {
	LinkID int64
	Code   string
	N      int64
}

// linkJSON is the wire shape of a link (admin reads).
type linkJSON struct {
	Code         string        `json:"code"`
	Domain       *string       `json:"domain"`
	URL          string        `json:"url"`
	Path         string        `json:"path"`
	Title        string        `json:"title"`
	Tags         []string      `json:"tags"`
	Rules        []LinkRule    `json:"rules"`
	Destinations []Destination `json:"destinations"`
	Redirect     int           `json:"redirect"`
	ExpiresAt    *string       `json:"expiresAt"`
	MaxClicks    *int64        `json:"maxClicks"`
	AdID         *string       `json:"adId"`
	Clicks       int64         `json:"clicks"`
	CreatedAt    string        `json:"createdAt"`
	UpdatedAt    string        `json:"updatedAt"`
}

// LinkPath is the path a link's code redirects from.
func LinkPath(code string) string { return "/r/" + code }

// MarshalJSON renders the link with its path, its times in TimeLayout,
// and null for what is not set.
func (l Link) MarshalJSON() ([]byte, error) {
	j := linkJSON{Code: l.Code, URL: l.URL, Path: LinkPath(l.Code), Title: l.Title, Tags: l.Tags, Rules: l.Rules,
		Destinations: l.Destinations, Redirect: l.Redirect, Clicks: l.Clicks,
		CreatedAt: FormatTime(l.CreatedAt), UpdatedAt: FormatTime(l.UpdatedAt)}
	if l.Domain != "" {
		j.Domain = &l.Domain
	}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	if j.Rules == nil {
		j.Rules = []LinkRule{}
	}
	if j.Destinations == nil {
		j.Destinations = []Destination{}
	}
	if !l.ExpiresAt.IsZero() {
		s := FormatTime(l.ExpiresAt)
		j.ExpiresAt = &s
	}
	if l.MaxClicks > 0 {
		j.MaxClicks = &l.MaxClicks
	}
	if l.AdID > 0 {
		s := strconv.FormatInt(l.AdID, 10)
		j.AdID = &s
	}
	return json.Marshal(j)
}

// LinkInput is the body of a link create or replace request once
// validated. An empty Code on create asks for a generated one.
type LinkInput struct {
	Domain       string        `json:"domain"`
	Code         string        `json:"code"`
	URL          string        `json:"url"`
	Title        string        `json:"title"`
	Tags         []string      `json:"tags"`
	Rules        []LinkRule    `json:"rules"`
	Destinations []Destination `json:"destinations"`
	ExpiresAt    time.Time     `json:"expiresAt"`
	MaxClicks    int64         `json:"maxClicks"`
	Redirect     int           `json:"redirect"`
	AdID         int64         `json:"adId"`
}

// Input returns the fields of l that a client chooses.
func (l *Link) Input() LinkInput {
	return LinkInput{Domain: l.Domain, Code: l.Code, URL: l.URL, Title: l.Title, Tags: l.Tags, Rules: l.Rules,
		Destinations: l.Destinations, ExpiresAt: l.ExpiresAt, MaxClicks: l.MaxClicks, Redirect: l.Redirect, AdID: l.AdID}
}

// Link returns the link that in describes.
func (in LinkInput) Link(id int64, clicks int64, created, updated time.Time) Link {
	return Link{ID: id, Domain: in.Domain, Code: in.Code, URL: in.URL, Title: in.Title, Tags: in.Tags, Rules: in.Rules,
		Destinations: in.Destinations, ExpiresAt: in.ExpiresAt, MaxClicks: in.MaxClicks,
		Redirect: in.Redirect, AdID: in.AdID, Clicks: clicks, CreatedAt: created, UpdatedAt: updated}
}

// ParseLinkInput decodes and validates the JSON body of a link create or
// replace request. On failure it returns a KindInvalid *Error whose Problems
// name every bad field.
func ParseLinkInput(body []byte) (LinkInput, error) {
	in := LinkInput{Redirect: DefaultRedirect}
	p := Problems{}
	fields, ok := object(body, p, "url", "code", "domain", "title", "tags", "rules", "destinations", "expiresAt", "maxClicks", "redirect", "adId")
	if !ok {
		return in, Invalid("invalid link", p)
	}
	if raw, ok := present(fields, "destinations"); ok {
		in.Destinations = parseDestinations(raw, p)
	}
	if _, ok := present(fields, "url"); ok || len(in.Destinations) == 0 {
		in.URL = urlField(fields, "url", "url", p)
	} else {
		// A split with no url of its own: the link's url is its first
		// destination's (what a client that knows no splits shows).
		in.URL = in.Destinations[0].URL
	}
	if raw, ok := present(fields, "domain"); ok {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			p["domain"] = "must be a string"
		} else if in.Domain, s = NormDomain(s); s != "" {
			p["domain"] = s
		}
	}
	in.Title = nameField(fields, "title", false, p)
	if raw, ok := present(fields, "tags"); ok {
		in.Tags = parseTags(raw, p)
	}
	if raw, ok := present(fields, "rules"); ok {
		in.Rules = parseRules(raw, p)
	}
	if raw, ok := present(fields, "code"); ok {
		if json.Unmarshal(raw, &in.Code) != nil {
			p["code"] = "must be a string"
		} else if msg := CheckCode(in.Code); msg != "" {
			p["code"] = msg
		}
	}
	if _, ok := present(fields, "expiresAt"); ok {
		in.ExpiresAt, _ = parseTimeField(fields, "expiresAt", p)
		in.ExpiresAt = in.ExpiresAt.UTC().Truncate(time.Millisecond)
	}
	if raw, ok := present(fields, "maxClicks"); ok {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n < 1 {
			p["maxClicks"] = "must be a positive integer (omit it for no limit)"
		}
		in.MaxClicks = n
	}
	if raw, ok := present(fields, "redirect"); ok {
		n, err := strconv.Atoi(string(raw))
		if err != nil || !validRedirect(n) {
			p["redirect"] = "must be one of 301, 302, 307, 308"
		}
		in.Redirect = n
	}
	if raw, ok := present(fields, "adId"); ok {
		// Ad ids leave Marquee as strings ({"id": "7"}); take either form.
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			p["adId"] = "must be an ad id (a positive integer, or a string of one)"
		}
		in.AdID = n
	}
	return in, Invalid("invalid link", p)
}

// CheckNew refuses, for a link being created at now, an expiresAt that
// is not in the future: the link would answer 410 from its first click.
// (A replace may set a past expiresAt: that is how a link is ended.)
func (in LinkInput) CheckNew(now time.Time) error {
	if !in.ExpiresAt.IsZero() && !in.ExpiresAt.After(now) {
		return Invalid("invalid link", Problems{"expiresAt": "must be in the future: a new link would be expired at once (to end a link, replace it with a past expiresAt)"})
	}
	return nil
}

// Validate checks a LinkInput built in code (seeding, an ad's tracking
// link, an imported row) against the rules ParseLinkInput applies to its
// url, code, redirect, limit, title, domain and tags, normalising them as
// it does (its rules and destinations are taken as they are).
func (in *LinkInput) Validate() error {
	p := Problems{}
	if msg := CheckURL(in.URL); msg != "" {
		p["url"] = msg
	}
	if msg := CheckCode(in.Code); in.Code != "" && msg != "" {
		p["code"] = msg
	}
	if in.Redirect == 0 {
		in.Redirect = DefaultRedirect
	}
	if !validRedirect(in.Redirect) {
		p["redirect"] = "must be one of 301, 302, 307, 308"
	}
	if in.MaxClicks < 0 {
		p["maxClicks"] = "must be a positive integer (omit it for no limit)"
	}
	if in.Title != "" {
		if in.Title = strings.TrimSpace(in.Title); nameProblem(in.Title) != "" {
			p["title"] = nameProblem(in.Title)
		}
	}
	if in.Domain != "" {
		var msg string
		if in.Domain, msg = NormDomain(in.Domain); msg != "" {
			p["domain"] = msg
		}
	}
	if len(in.Tags) > 0 {
		in.Tags = normTags(in.Tags, p)
	}
	return Invalid("invalid link", p)
}

func validRedirect(n int) bool {
	for _, r := range Redirects {
		if n == r {
			return true
		}
	}
	return false
}

// CheckCode returns what is wrong with a custom code, or "": 1 to
// MaxCodeLen characters of [A-Za-z0-9_-], not one of ReservedCodes (in any
// case).
func CheckCode(s string) string {
	if !CodeShaped(s) {
		return fmt.Sprintf("must be 1-%d characters of A-Z, a-z, 0-9, _ and -", MaxCodeLen)
	}
	if IsReservedCode(s) {
		return fmt.Sprintf("%q is reserved", s)
	}
	return ""
}

// CodeShaped reports whether s is 1 to MaxCodeLen characters of
// [A-Za-z0-9_-]: what any code, custom or generated, looks like.
func CodeShaped[S ~string | ~[]byte](s S) bool {
	if len(s) == 0 || len(s) > MaxCodeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// IsReservedCode reports whether s is one of ReservedCodes, in any case.
func IsReservedCode(s string) bool {
	for _, r := range ReservedCodes {
		if strings.EqualFold(s, r) {
			return true
		}
	}
	return false
}

// NewCode returns a random code of GeneratedCodeLen characters of
// CodeAlphabet (crypto/rand). Codes are checked for collisions where they
// are stored.
func NewCode() string {
	for {
		b := make([]byte, GeneratedCodeLen)
		var r [GeneratedCodeLen]byte
		if _, err := rand.Read(r[:]); err != nil {
			panic(err) // crypto/rand.Read never fails (Go ≥ 1.24)
		}
		// 256 = 4·55 + 36: bytes ≥ 220 would favour the first letters;
		// they are re-drawn below.
		ok := true
		for i, x := range r {
			if x >= 220 {
				ok = false
				break
			}
			b[i] = CodeAlphabet[int(x)%len(CodeAlphabet)]
		}
		if ok && !IsReservedCode(string(b)) {
			return string(b)
		}
	}
}

// NoLink is the KindNotFound error of a code that names no link.
func NoLink[T ~string | ~[]byte](code T) *Error { return Errorf(KindNotFound, "no link %q", code) }
