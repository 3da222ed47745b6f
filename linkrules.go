package marquee

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/language"
)

// Limits of a link's tags, rules and destinations.
const (
	MaxTags         = 20   // tags on one link
	MaxTagLen       = 50   // bytes of a tag
	MaxRules        = 20   // redirect rules on one link
	MaxRuleValues   = 20   // values in one condition of a rule (platforms, languages, countries, query parameters)
	MaxQueryLen     = 100  // bytes of a rule's query parameter name or value
	MaxDestinations = 10   // A/B destinations on one link
	MaxDestWeight   = 1000 // a destination's weight (as a campaign's, MaxWeight)
	MaxDomainLen    = 253  // bytes of a domain name
	PromotedWeight  = 100  // the weight "promote the winner" gives a destination (MaxDestWeight bounds a weight)
)

// PlatformDesktop is the platform a redirect rule names for a User-Agent
// that is neither Android's nor iOS's (reports call it web).
const PlatformDesktop = "desktop"

// RulePlatforms are the platforms a redirect rule may name: android and
// ios as reports classify a User-Agent, and desktop for every other one
// (reports call it web).
var RulePlatforms = []string{PlatformAndroid, PlatformIOS, PlatformDesktop}

// LinkRule is one redirect rule of a link: a visitor whose request
// meets every condition of When goes to URL. A link's rules are tried in
// order, and the first that matches wins.
type LinkRule struct {
	When RuleWhen
	URL  string
}

// RuleWhen is the conditions of a rule; each that is set must hold (an
// unset one holds for everyone), and at least one is set.
type RuleWhen struct {
	Platforms []string     // any of RulePlatforms
	Languages []string     // BCP 47 tags, canonical ("en", "pt-BR"); one of them matches the browser's Accept-Language
	Countries []string     // ISO 3166-1 alpha-2, upper case; the visitor's country (GeoIP) is one of them
	Query     []QueryMatch // every one of these query parameters has exactly this value; sorted by name
	From, To  time.Time    // the request's time is in [From, To); zero: open
}

// QueryMatch is a query parameter a rule needs, with its value.
type QueryMatch struct{ Name, Value string }

// Destination is one target of a link's A/B split: visitors are shared
// among a link's destinations in proportion to their weights.
type Destination struct {
	URL    string `json:"url"`
	Weight int    `json:"weight"`
}

// ruleJSON and whenJSON are the wire shape of a rule.
type ruleJSON struct {
	When whenJSON `json:"when"`
	URL  string   `json:"url"`
}

type whenJSON struct {
	Platform []string         `json:"platform,omitempty"`
	Language []string         `json:"language,omitempty"`
	Country  []string         `json:"country,omitempty"`
	Query    *json.RawMessage `json:"query,omitempty"`
	From     string           `json:"from,omitempty"`
	To       string           `json:"to,omitempty"`
}

// MarshalJSON renders the rule as it is given: {"when": {…}, "url": …},
// the shape the API answers and the stores keep (sqltx reads it back;
// ParseLinkInput reads and checks what a client sends).
func (r LinkRule) MarshalJSON() ([]byte, error) {
	w := whenJSON{Platform: r.When.Platforms, Language: r.When.Languages, Country: r.When.Countries}
	if len(r.When.Query) > 0 {
		// An object in the rule's (name) order: encoding/json would sort a
		// map the same way, but this says it.
		b := []byte{'{'}
		for i, q := range r.When.Query {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(q.Name)
			v, _ := json.Marshal(q.Value)
			b = append(append(append(b, k...), ':'), v...)
		}
		raw := json.RawMessage(append(b, '}'))
		w.Query = &raw
	}
	if !r.When.From.IsZero() {
		w.From = FormatTime(r.When.From)
	}
	if !r.When.To.IsZero() {
		w.To = FormatTime(r.When.To)
	}
	return json.Marshal(ruleJSON{When: w, URL: r.URL})
}

// parseRules reads a link's rules field, naming problems as
// rules[i].when.language[j].
func parseRules(raw json.RawMessage, p Problems) []LinkRule {
	var items []json.RawMessage
	if firstByte(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		p["rules"] = "must be an array of rules ({\"when\": {…}, \"url\": …})"
		return nil
	}
	if len(items) > MaxRules {
		p["rules"] = fmt.Sprintf("must hold at most %d rules (got %d)", MaxRules, len(items))
		return nil
	}
	rules := make([]LinkRule, 0, len(items))
	for i, it := range items {
		path := fmt.Sprintf("rules[%d]", i)
		fields, ok := subObject(it, path, p, "when", "url")
		if !ok && fields == nil {
			continue
		}
		var r LinkRule
		r.URL = urlField(fields, "url", path+".url", p)
		if raw, ok := present(fields, "when"); !ok {
			p[path+".when"] = "is required (the conditions a visitor must meet)"
		} else {
			r.When = parseWhen(raw, path+".when", p)
		}
		rules = append(rules, r)
	}
	return rules
}

// parseWhen reads a rule's conditions.
func parseWhen(raw json.RawMessage, path string, p Problems) RuleWhen {
	var w RuleWhen
	fields, _ := subObject(raw, path, p, "platform", "language", "country", "query", "from", "to")
	if fields == nil {
		return w
	}
	set := 0
	for k := range fields {
		if p[path+"."+k] == "unknown field" {
			p[path+"."+k] = "unknown field (a rule's when has platform, language, country, query, from, to)"
		}
		if _, ok := present(fields, k); ok {
			set++
		}
	}
	w.Platforms = ruleValues(fields, "platform", path, normRulePlatform, p)
	w.Languages = ruleValues(fields, "language", path, normLanguage, p)
	w.Countries = ruleValues(fields, "country", path, normCountry, p)
	if raw, ok := present(fields, "query"); ok {
		w.Query = parseQueryMatch(raw, path+".query", p)
	}
	var fromOK, toOK bool
	if _, ok := present(fields, "from"); ok {
		w.From, fromOK = timeAt(fields, "from", path, p)
	}
	if _, ok := present(fields, "to"); ok {
		w.To, toOK = timeAt(fields, "to", path, p)
	}
	if fromOK && toOK && !w.To.After(w.From) {
		p[path+".to"] = "must be after from"
	}
	if set == 0 {
		p[path] = "must set at least one condition (platform, language, country, query, from, to); a link's url is where everyone else goes"
	}
	return w
}

// ruleValues reads one of a rule's lists (a string or an array of
// strings), at most MaxRuleValues of them.
func ruleValues(fields map[string]json.RawMessage, k, path string, norm func(string) (string, string), p Problems) []string {
	vals := parseOneOrMany(fields, k, path, norm, p)
	if len(vals) > MaxRuleValues {
		p[path+"."+k] = fmt.Sprintf("must hold at most %d values (got %d)", MaxRuleValues, len(vals))
		return nil
	}
	return vals
}

// timeAt reads an RFC 3339 time of an object at path, kept in UTC to the
// millisecond.
func timeAt(fields map[string]json.RawMessage, k, path string, p Problems) (time.Time, bool) {
	sub := Problems{}
	t, ok := parseTimeField(fields, k, sub)
	for f, msg := range sub {
		p[path+"."+f] = msg
	}
	return t.UTC().Truncate(time.Millisecond), ok
}

// parseQueryMatch reads a rule's query condition: an object of
// parameter names to the value each must have.
func parseQueryMatch(raw json.RawMessage, path string, p Problems) []QueryMatch {
	var m map[string]string
	if firstByte(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		p[path] = "must be an object of parameter names to values, such as {\"utm_source\": \"newsletter\"}"
		return nil
	}
	if len(m) > MaxRuleValues {
		p[path] = fmt.Sprintf("must hold at most %d parameters (got %d)", MaxRuleValues, len(m))
		return nil
	}
	out := make([]QueryMatch, 0, len(m))
	for k, v := range m {
		switch {
		case k == "" || len(k) > MaxQueryLen:
			p[path] = fmt.Sprintf("parameter names must be 1 to %d bytes", MaxQueryLen)
		case len(v) > MaxQueryLen:
			p[path+"."+k] = fmt.Sprintf("must be at most %d bytes", MaxQueryLen)
		case strings.ContainsFunc(k+v, isControl):
			p[path+"."+k] = "must not contain control characters"
		default:
			out = append(out, QueryMatch{Name: k, Value: v})
		}
	}
	slices.SortFunc(out, func(a, b QueryMatch) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func normRulePlatform(s string) (string, string) {
	v := strings.ToLower(s)
	if slices.Contains(RulePlatforms, v) {
		return v, ""
	}
	return "", fmt.Sprintf("must be one of %q, %q, %q, got %q", PlatformAndroid, PlatformIOS, PlatformDesktop, s)
}

// normLanguage canonicalises a BCP 47 language tag ("EN-us" → "en-US"),
// or says why s is not one.
func normLanguage(s string) (string, string) {
	if s == "" || len(s) > 35 {
		return "", fmt.Sprintf("%q is not a BCP 47 language tag (such as en, pt-BR, zh-Hant)", s)
	}
	tag, err := language.Parse(s)
	if err != nil {
		return "", fmt.Sprintf("%q is not a BCP 47 language tag (such as en, pt-BR, zh-Hant)", s)
	}
	return tag.String(), ""
}

// parseDestinations reads a link's A/B destinations: at least two, each
// with a URL and a weight from 0 to MaxDestWeight, the weights summing to a
// positive number.
func parseDestinations(raw json.RawMessage, p Problems) []Destination {
	var items []json.RawMessage
	if firstByte(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		p["destinations"] = "must be an array of {\"url\": …, \"weight\": N}"
		return nil
	}
	switch {
	case len(items) == 0:
		return nil
	case len(items) == 1:
		p["destinations"] = "must hold at least 2 destinations to split traffic (one is the link's url)"
		return nil
	case len(items) > MaxDestinations:
		p["destinations"] = fmt.Sprintf("must hold at most %d destinations (got %d)", MaxDestinations, len(items))
		return nil
	}
	out := make([]Destination, 0, len(items))
	sum := 0
	for i, it := range items {
		path := fmt.Sprintf("destinations[%d]", i)
		fields, _ := subObject(it, path, p, "url", "weight")
		if fields == nil {
			continue
		}
		d := Destination{URL: urlField(fields, "url", path+".url", p)}
		if raw, ok := present(fields, "weight"); !ok {
			p[path+".weight"] = "is required"
		} else if json.Unmarshal(raw, &d.Weight) != nil || d.Weight < 0 || d.Weight > MaxDestWeight {
			p[path+".weight"] = fmt.Sprintf("must be an integer from 0 to %d", MaxDestWeight)
			d.Weight = 0
		}
		sum += d.Weight
		out = append(out, d)
	}
	if sum == 0 && len(out) == len(items) {
		p["destinations"] = "weights must sum to a positive number"
	}
	return out
}

// urlField reads a required redirect target of an object at path.
func urlField(fields map[string]json.RawMessage, k, path string, p Problems) string {
	raw, ok := present(fields, k)
	var s string
	switch {
	case !ok:
		p[path] = "is required"
	case json.Unmarshal(raw, &s) != nil:
		p[path] = "must be a string"
	default:
		if msg := CheckURL(s); msg != "" {
			p[path] = msg
		}
	}
	return s
}

// parseTags reads a link's tags field (see normTags).
func parseTags(raw json.RawMessage, p Problems) []string {
	var tags []string
	if json.Unmarshal(raw, &tags) != nil {
		p["tags"] = "must be an array of strings"
		return nil
	}
	return normTags(tags, p)
}

// normTags checks a link's tags — at most MaxTags, each 1 to MaxTagLen
// bytes once trimmed, without commas or control characters — and returns
// them lower-cased, without duplicates.
func normTags(tags []string, p Problems) []string {
	if len(tags) > MaxTags {
		p["tags"] = fmt.Sprintf("must hold at most %d tags (got %d)", MaxTags, len(tags))
		return nil
	}
	out := make([]string, 0, len(tags))
	for i, t := range tags {
		t, msg := NormTag(t)
		switch {
		case msg != "":
			p[fmt.Sprintf("tags[%d]", i)] = msg
		case !slices.Contains(out, t):
			out = append(out, t)
		}
	}
	return out
}

// NormTag is a tag as stored — trimmed, lower-cased — or what is wrong
// with it.
func NormTag(s string) (string, string) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "" || len(t) > MaxTagLen:
		return "", fmt.Sprintf("must be 1 to %d bytes", MaxTagLen)
	case !utf8.ValidString(t) || strings.ContainsFunc(t, func(r rune) bool { return isControl(r) || r == ',' }):
		return "", "must not contain commas or control characters"
	}
	return t, ""
}

// NormDomain is a link domain as stored — lower case, no trailing dot —
// or what is wrong with it: it must be a hostname (labels of letters,
// digits and hyphens, 1 to 63 bytes each, not starting or ending with a
// hyphen), without a scheme, port or path.
func NormDomain(s string) (string, string) {
	d := strings.TrimSuffix(strings.ToLower(s), ".")
	bad := fmt.Sprintf("%q is not a hostname (such as go.example.com; no scheme, port or path)", s)
	if d == "" || len(d) > MaxDomainLen {
		return "", bad
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", bad
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return "", bad
			}
		}
	}
	return d, ""
}

// LinkKey names a link across domains: its code on the default domain
// (""), else domain + "/" + code. Neither a code nor a domain holds a
// "/", so SplitLinkKey undoes it. The link cache, the click counter and
// reports key links by it.
func LinkKey(domain, code string) string {
	if domain == "" {
		return code
	}
	return domain + "/" + code
}

// SplitLinkKey is the domain and code of a LinkKey.
func SplitLinkKey(key string) (domain, code string) {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}
