package ivt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2/v2"
	ahocorasick "github.com/petar-dambovaliev/aho-corasick"

	"marquee/third_party/ivtlists"
)

// MaxAgent bounds a User-Agent that can be a browser's: no browser sends
// a longer one (the longest in-app browsers' are about 400 bytes).
const MaxAgent = 1024

// matchTimeout bounds one list's match on one User-Agent (the lists are
// regular expressions with look-around, run by a backtracking engine):
// a User-Agent that takes longer is a made-up one, a bot's.
const matchTimeout = 50 * time.Millisecond

// The marks of what the maintained lists do not tell apart, lower case:
// link previewers and mail image proxies (their fetch is no person's
// view), headless and automated browsers, and HTTP libraries and tools.
var (
	previewMarks = []string{"facebookexternalhit", "facebookcatalog", "twitterbot", "slackbot", "slack-imgproxy",
		"slack-screenshot", "discordbot", "telegrambot", "linkedinbot", "skypeuripreview", "googleimageproxy",
		"yahoomailproxy", "bingpreview", "redditbot", "embedly", "iframely", "vkshare", "google-pagerenderer",
		"microsoft office existence discovery", "ms-office", "microsoftpreview", "cardyb", "mastodon/", "pleroma", "misskey/", "bluesky",
		"outlook-android", "zoom marketplace", "whatsapp/", "applenewsbot", "google-read-aloud",
		"feedfetcher", "pinterestbot", "qwantify/bleriot", "preview"}
	previewPrefixes = []string{"whatsapp", "snapchat", "facebook", "linkedin"}
	headlessMarks   = []string{"headlesschrome", "headless", "phantomjs", "slimerjs", "selenium", "webdriver", "puppeteer",
		"playwright", "cypress/", "chrome-lighthouse", "lighthouse", "pagespeed", "ptst/", "prerender"}
	nonBrowserMarks = []string{"curl/", "wget/", "python-requests", "python-urllib", "python-httpx", "aiohttp",
		"go-http-client", "okhttp", "java/", "java-http-client", "apache-httpclient", "libwww-perl", "lwp::",
		"axios/", "node-fetch", "undici", "guzzlehttp", "php/", "ruby", "rest-client", "reqwest", "dart/",
		"postmanruntime", "insomnia", "httpie", "scrapy", "windowspowershell", "powershell", "wordpress/",
		"jakarta commons-httpclient", "httpclient", "http.rb", "faraday", "libcurl", "winhttp", "fasthttp"}
)

// Agents classifies User-Agents, each once: it remembers up to about
// maxRemembered of them (the traffic of a site comes from a few
// thousand). It is safe for concurrent use.
//
// The lists are a few thousand regular expressions: a User-Agent is
// matched only against those whose required literal it holds (found in
// one pass by an Aho-Corasick automaton of the literals, lower case),
// and those that have none.
type Agents struct {
	rules  []*rule
	ac     ahocorasick.AhoCorasick // the rules' literals, lower case (an NFA: 1.5 MB)
	byLit  [][]int                 // a literal's rules
	always []int                   // the rules without a literal
	seed   maphash.Seed
	shards [agentShards]agentShard
}

// rule is one pattern of a list, compiled by Go's regexp (RE2) the first
// time a User-Agent holds its literal (most never run: compiling the
// lists whole would keep tens of megabytes), or, when it looks around,
// by regexp2 at once.
type rule struct {
	expr  string // for regexp: the pattern, (?i) first for isbot's
	once  sync.Once
	re    *regexp.Regexp
	re2   *regexp2.Regexp
	isbot bool // of isbot's list (else crawler-user-agents')
}

func (r *rule) match(ua string) bool {
	if r.re2 != nil {
		ok, err := r.re2.MatchString(ua)
		return ok || err != nil // past its time: a made-up User-Agent
	}
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) }) // parsed by NewAgents: it compiles
	return r.re.MatchString(ua)
}

const (
	agentShards   = 256
	maxRemembered = 128 << 10
)

// agentShard remembers the classified User-Agents whose hash picks it:
// read without a lock from an immutable map, which a new User-Agent
// replaces with a copy (at most maxRemembered/agentShards entries:
// about 10 µs, a third of a classification), so that readers on every
// core share nothing they write.
type agentShard struct {
	mu sync.Mutex // serialises the copies
	m  atomic.Pointer[map[string]Reason]
}

// DefaultAgents is the Agents of the vendored lists, compiled once
// in the process's life.
var DefaultAgents = sync.OnceValue(func() *Agents {
	a, err := NewAgents(ivtlists.CrawlerUserAgents, ivtlists.IsBot)
	if err != nil {
		panic("ivt: the vendored lists do not compile: " + err.Error()) // a test of this package catches it
	}
	return a
})

// NewAgents compiles the lists: crawlers in crawler-user-agents' JSON
// ([{"pattern"…}], case sensitive), bots as isbot's ([pattern…], case
// insensitive).
func NewAgents(crawlers, bots []byte) (*Agents, error) {
	var cl []struct {
		Pattern string `json:"pattern"`
	}
	if err := json.Unmarshal(crawlers, &cl); err != nil {
		return nil, fmt.Errorf("crawler list: %w", err)
	}
	var bl []string
	if err := json.Unmarshal(bots, &bl); err != nil {
		return nil, fmt.Errorf("bot list: %w", err)
	}
	a := &Agents{seed: maphash.MakeSeed()}
	lits := map[string]int{}
	var dict []string
	add := func(pattern string, isbot bool) error {
		expr := pattern
		if isbot {
			expr = "(?i)" + pattern
		}
		r := rule{expr: expr, isbot: isbot}
		lit := ""
		if tree, err := syntax.Parse(expr, syntax.Perl); err == nil {
			lit = required(tree)
		} else { // look-around: regexp2, as the list's own JavaScript runs it
			opt := regexp2.None
			if isbot {
				opt = regexp2.IgnoreCase
			}
			re2, err := regexp2.Compile(pattern, opt)
			if err != nil {
				return fmt.Errorf("pattern %q: %w", pattern, err)
			}
			re2.MatchTimeout = matchTimeout
			r.re2 = re2
		}
		a.rules = append(a.rules, &r)
		if len(lit) < 2 {
			a.always = append(a.always, len(a.rules)-1)
			return nil
		}
		i, ok := lits[lit]
		if !ok {
			i = len(dict)
			lits[lit] = i
			dict = append(dict, lit)
			a.byLit = append(a.byLit, nil)
		}
		a.byLit[i] = append(a.byLit[i], len(a.rules)-1)
		return nil
	}
	for _, c := range cl {
		if err := add(c.Pattern, false); err != nil {
			return nil, fmt.Errorf("crawler list: %w", err)
		}
	}
	for _, p := range bl {
		if err := add(p, true); err != nil {
			return nil, fmt.Errorf("bot list: %w", err)
		}
	}
	b := ahocorasick.NewAhoCorasickBuilder(ahocorasick.Opts{MatchKind: ahocorasick.StandardMatch})
	a.ac = b.Build(dict)
	for i := range a.shards {
		a.shards[i].m.Store(&map[string]Reason{})
	}
	return a, nil
}

// required is a literal, lower case, that every match of re holds (""
// when it cannot say one): the longest of a concatenation's.
func required(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		return strings.ToLower(string(re.Rune))
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, s := range re.Sub {
			if l := required(s); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// Reason classifies a User-Agent (from memory when it was seen before:
// no lock, no allocation).
func (a *Agents) Reason(ua []byte) Reason {
	sh := &a.shards[maphash.Bytes(a.seed, ua)%agentShards]
	if r, ok := (*sh.m.Load())[string(ua)]; ok {
		return r
	}
	r := a.Classify(string(ua))
	if len(ua) <= MaxAgent {
		sh.mu.Lock()
		old := *sh.m.Load()
		var m map[string]Reason
		if len(old) >= maxRemembered/agentShards {
			m = map[string]Reason{} // start over
		} else {
			m = make(map[string]Reason, len(old)+1)
			for k, v := range old {
				m[k] = v
			}
		}
		m[string(ua)] = r
		sh.m.Store(&m)
		sh.mu.Unlock()
	}
	return r
}

// Classify is what a User-Agent says of its client, without memory: no
// User-Agent, or one longer than MaxAgent, is NonBrowser; then, in this
// order, a previewer's or mail proxy's mark, a headless browser's, an
// HTTP library's, a declared crawler (crawler-user-agents), and a bot of
// isbot's list (NonBrowser when it does not say Mozilla/ and names no
// bot, crawler or spider; else Crawler).
func (a *Agents) Classify(ua string) Reason {
	ua = strings.TrimSpace(ua)
	if ua == "" || len(ua) > MaxAgent {
		return NonBrowser
	}
	lower := strings.ToLower(ua)
	if lower == "mozilla/5.0" { // Apple Mail Privacy Protection's proxy sends no more
		return Preview
	}
	switch {
	case hasAny(lower, headlessMarks):
		return Headless
	case hasAny(lower, previewMarks) || hasPrefix(lower, previewPrefixes):
		return Preview
	case hasAny(lower, nonBrowserMarks):
		return NonBrowser
	}
	matched, isbot := false, false
	check := func(i int) {
		if r := a.rules[i]; !matched && r.match(ua) {
			matched, isbot = true, r.isbot
		}
	}
	it := a.ac.IterOverlapping(lower)
	for m := it.Next(); m != nil; m = it.Next() {
		for _, i := range a.byLit[m.Pattern()] {
			check(i)
		}
	}
	for _, i := range a.always {
		check(i)
	}
	switch {
	case !matched:
		return Human
	case isbot && !strings.HasPrefix(lower, "mozilla/") && !hasAny(lower, []string{"bot", "crawl", "spider"}):
		return NonBrowser
	}
	return Crawler
}

func hasAny(s string, marks []string) bool {
	for _, m := range marks {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func hasPrefix(s string, marks []string) bool {
	for _, m := range marks {
		if strings.HasPrefix(s, m) {
			return true
		}
	}
	return false
}

// IsPrefetch reports whether a request's Sec-Purpose or Purpose header
// (either may be passed; empty when absent) says it is a prefetch or a
// prerender, not a person's visit.
func IsPrefetch(secPurpose, purpose []byte) bool {
	return bytes.Contains(secPurpose, []byte("prefetch")) || bytes.Contains(secPurpose, []byte("prerender")) ||
		bytes.EqualFold(bytes.TrimSpace(purpose), []byte("prefetch"))
}
