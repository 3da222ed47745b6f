package marquee

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Targeting is a targeting tree (a campaign's "targeting"): exactly one
// of a boolean node — All (every child matches), Any (one does), Not (its
// child does not) — a key rule (Key with one operator), or a DayPart.
// Package targeting compiles and matches it; docs/targeting.md is its
// reference.
type Targeting struct {
	All []Targeting `json:"all,omitempty"`
	Any []Targeting `json:"any,omitempty"`
	Not *Targeting  `json:"not,omitempty"`
	// Key is a publisher's key (lower case: see KVKey) or one of
	// ReservedKeys ("$device", "$path", …), which the server fills.
	Key string `json:"key,omitempty"`
	// The operators of a key rule: one of In, NotIn, Prefix, Glob (path,
	// host and referrer only), a range Gte/Lte (publisher keys, numeric
	// values), Exists or Absent.
	In     []string `json:"in,omitempty"`
	NotIn  []string `json:"notIn,omitempty"`
	Prefix []string `json:"prefix,omitempty"`
	Glob   []string `json:"glob,omitempty"`
	Gte    *float64 `json:"gte,omitempty"`
	Lte    *float64 `json:"lte,omitempty"`
	Exists bool     `json:"exists,omitempty"`
	Absent bool     `json:"absent,omitempty"`
	// DayPart is a time-of-week rule, read in the campaign's time zone.
	DayPart *DayPart `json:"dayPart,omitempty"`
}

// DayPart matches the times of the week on Days (none: every day) from
// From to To, wall-clock "HH:MM" in the campaign's time zone; To is
// exclusive, "24:00" is the end of the day, and a To before From runs
// past midnight into the next day (still counted as the day it began).
type DayPart struct {
	Days []string `json:"days,omitempty"`
	From string   `json:"from"`
	To   string   `json:"to"`
}

// The limits of a targeting tree.
const (
	MaxTargetingDepth  = 4   // a rule alone is depth 1; {"all": [rule]} is 2
	MaxTargetingNodes  = 64  // nodes (rules and boolean nodes) in one tree
	MaxTargetingValues = 100 // values of one rule
	MaxKVKeyLen        = 40
	MaxKVValueLen      = 100
	MaxKVPairs         = 32 // key-value pairs of a decision request, and of a slot
)

// The reserved keys: what the server knows of a request, from its fields,
// its page URL, GeoIP and its User-Agent.
const (
	KeyHost     = "$host"     // the page's host name, lower case
	KeyPath     = "$path"     // the page URL's path
	KeyReferrer = "$referrer" // the referrer's host name, lower case
	KeySite     = "$site"     // the placement's site
	KeyCountry  = "$country"  // ISO 3166-1 alpha-2
	KeyRegion   = "$region"   // ISO 3166-2 ("US-CA")
	KeyCity     = "$city"     // a city's name, lower case
	KeyMetro    = "$metro"    // a metro (DMA) code
	KeyDevice   = "$device"   // one of DeviceTypes
	KeyBrowser  = "$browser"  // the User-Agent's browser, lower case ("chrome", "safari")
	KeyOS       = "$os"       // the User-Agent's operating system, lower case ("ios", "windows")
	KeyLanguage = "$language" // a primary language subtag ("en"), from the request or Accept-Language
	KeyIP       = "$ip"       // the viewer's address: In and NotIn hold CIDR ranges
)

// ReservedKeys are the keys the server fills.
var ReservedKeys = []string{KeyHost, KeyPath, KeyReferrer, KeySite, KeyCountry, KeyRegion, KeyCity, KeyMetro,
	KeyDevice, KeyBrowser, KeyOS, KeyLanguage, KeyIP}

// DeviceTypes are the values of $device.
var DeviceTypes = []string{"desktop", "phone", "tablet", "tv", "bot"}

// Weekdays are the days of a DayPart, Sunday first (time.Weekday's order).
var Weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// KVKey is a publisher's key as stored and matched: lower case, trimmed;
// ok is false when it is not 1 to MaxKVKeyLen bytes of a–z, 0–9, "_",
// "." and "-" (not starting with "." or "-").
func KVKey(k string) (string, bool) {
	k = strings.ToLower(strings.TrimSpace(k))
	if k == "" || len(k) > MaxKVKeyLen || k[0] == '.' || k[0] == '-' {
		return k, false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return k, false
		}
	}
	return k, true
}

// KVValue is a value as stored and matched: lower case (values compare
// case-insensitively), trimmed; ok is false when it is empty, longer than
// MaxKVValueLen bytes, or holds a control character.
func KVValue(v string) (string, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	return v, v != "" && len(v) <= MaxKVValueLen && !strings.ContainsFunc(v, isControl)
}

// ParseTimeZone is the one reader of a time zone, for every feature that
// takes one (campaigns, advertisers, day-parts, reports' tz, schedules):
// "" (the default, UTC) or an IANA name time.LoadLocation knows — never
// "Local", which would depend on the server's.
func ParseTimeZone(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(tz, "local") {
		return nil, fmt.Errorf("must be an IANA time zone name (\"Local\" depends on the server)")
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("unknown IANA time zone %q", tz)
	}
	return loc, nil
}

// ParseDayMinute reads "HH:MM" (00:00 to 24:00) as minutes of the day.
func ParseDayMinute(s string) (int, bool) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh > 24 || hh == 24 && mm != 0 {
		return 0, false
	}
	return hh*60 + mm, true
}

// parseTargeting reads a targeting tree at path (its field's name), naming
// every problem in p; nil when it has one.
func parseTargeting(raw json.RawMessage, path string, p Problems) *Targeting {
	nodes := 0
	t := parseNode(raw, path, 1, &nodes, p)
	if nodes > MaxTargetingNodes {
		p[path] = fmt.Sprintf("has %d rules and nodes; at most %d", nodes, MaxTargetingNodes)
	}
	for k := range p {
		if k == path || strings.HasPrefix(k, path+".") || strings.HasPrefix(k, path+"[") {
			return nil
		}
	}
	return t
}

// keyOperators are the operators of a key rule, in the order a rule's
// problems name them.
var keyOperators = []string{"in", "notIn", "prefix", "glob", "gte", "lte", "exists", "absent"}

// targetingFields are the fields of a node.
var targetingFields = append([]string{"all", "any", "not", "key", "dayPart"}, keyOperators...)

func parseNode(raw json.RawMessage, at string, depth int, nodes *int, p Problems) *Targeting {
	*nodes++
	if depth > MaxTargetingDepth {
		p[at] = fmt.Sprintf("is too deep: a tree is at most %d levels (a rule alone is 1)", MaxTargetingDepth)
		return nil
	}
	fields, ok := subObject(raw, at, p, targetingFields...)
	if !ok {
		return nil
	}
	var t Targeting
	var kinds []string
	for _, k := range []string{"all", "any", "not", "key", "dayPart"} {
		if _, ok := present(fields, k); ok {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		p[at] = `must be one of {"all": […]}, {"any": […]}, {"not": {…}}, {"key": …, an operator}, {"dayPart": {…}}` + fmt.Sprintf("; has %d of them", len(kinds))
		return nil
	}
	if kinds[0] != "key" {
		for _, op := range keyOperators {
			if _, ok := fields[op]; ok {
				p[at+"."+op] = "is an operator of a key rule: give a key"
			}
		}
	}
	switch kinds[0] {
	case "all", "any":
		var kids []json.RawMessage
		if json.Unmarshal(fields[kinds[0]], &kids) != nil || len(kids) == 0 {
			p[at+"."+kinds[0]] = "must be a non-empty array of rules"
			return nil
		}
		out := make([]Targeting, len(kids))
		for i, k := range kids {
			if c := parseNode(k, fmt.Sprintf("%s.%s[%d]", at, kinds[0], i), depth+1, nodes, p); c != nil {
				out[i] = *c
			}
		}
		if kinds[0] == "all" {
			t.All = out
		} else {
			t.Any = out
		}
	case "not":
		t.Not = parseNode(fields["not"], at+".not", depth+1, nodes, p)
	case "dayPart":
		t.DayPart = parseDayPart(fields["dayPart"], at+".dayPart", p)
	case "key":
		parseKeyRule(fields, at, &t, p)
	}
	return &t
}

func parseDayPart(raw json.RawMessage, at string, p Problems) *DayPart {
	fields, ok := subObject(raw, at, p, "days", "from", "to")
	if !ok {
		return nil
	}
	var d DayPart
	if v, ok := present(fields, "days"); ok {
		if json.Unmarshal(v, &d.Days) != nil {
			p[at+".days"] = "must be an array of days: " + strings.Join(Weekdays, ", ")
		}
		for i, day := range d.Days {
			day = strings.ToLower(strings.TrimSpace(day))
			if len(day) > 3 {
				day = day[:3]
			}
			if !slices.Contains(Weekdays, day) {
				p[fmt.Sprintf("%s.days[%d]", at, i)] = fmt.Sprintf("must be one of %s, got %q", strings.Join(Weekdays, ", "), d.Days[i])
			}
			d.Days[i] = day
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"from", &d.From}, {"to", &d.To}} {
		v, ok := present(fields, f.name)
		if !ok || json.Unmarshal(v, f.dst) != nil {
			p[at+"."+f.name] = `is required: a time "HH:MM" from 00:00 to 24:00`
			continue
		}
		if _, ok := ParseDayMinute(*f.dst); !ok {
			p[at+"."+f.name] = fmt.Sprintf(`must be a time "HH:MM" from 00:00 to 24:00, got %q`, *f.dst)
		}
	}
	if d.From != "" && d.From == d.To {
		p[at+".to"] = "must differ from from (an empty day-part matches nothing)"
	}
	return &d
}

// keyOps says which operators a reserved key takes (publisher keys take
// in, notIn, gte/lte, exists and absent).
func keyOps(key string) []string {
	switch key {
	case KeyPath:
		return []string{"in", "notIn", "prefix", "glob", "exists", "absent"}
	case KeyHost, KeyReferrer:
		return []string{"in", "notIn", "glob", "exists", "absent"}
	}
	if strings.HasPrefix(key, "$") {
		return []string{"in", "notIn", "exists", "absent"}
	}
	return []string{"in", "notIn", "gte", "lte", "exists", "absent"}
}

func parseKeyRule(fields map[string]json.RawMessage, at string, t *Targeting, p Problems) {
	var key string
	if json.Unmarshal(fields["key"], &key) != nil {
		p[at+".key"] = "must be a string"
		return
	}
	if strings.HasPrefix(key, "$") {
		key = strings.ToLower(key)
		if !slices.Contains(ReservedKeys, key) {
			p[at+".key"] = fmt.Sprintf("unknown reserved key %q: one of %s", key, strings.Join(ReservedKeys, ", "))
			return
		}
	} else if k, ok := KVKey(key); !ok {
		p[at+".key"] = fmt.Sprintf("must be 1 to %d bytes of a-z, 0-9, _, . and - (keys are lower-cased), got %q", MaxKVKeyLen, key)
		return
	} else {
		key = k
	}
	t.Key = key
	allowed := keyOps(key)
	var ops []string
	for _, op := range keyOperators {
		if _, ok := present(fields, op); !ok {
			continue
		}
		if !slices.Contains(allowed, op) {
			p[at+"."+op] = fmt.Sprintf("is not an operator of %s: use %s", key, strings.Join(allowed, ", "))
			continue
		}
		if op != "lte" || !slices.Contains(ops, "gte") {
			ops = append(ops, op)
		}
	}
	if len(ops) != 1 {
		if len(ops) == 0 {
			p[at] = fmt.Sprintf("needs an operator: one of %s", strings.Join(allowed, ", "))
		} else {
			p[at] = fmt.Sprintf("has %s: give one operator (gte and lte together make a range)", strings.Join(ops, " and "))
		}
		return
	}
	switch op := ops[0]; op {
	case "in", "notIn", "prefix", "glob":
		vals := parseValues(fields[op], at+"."+op, key, op, p)
		switch op {
		case "in":
			t.In = vals
		case "notIn":
			t.NotIn = vals
		case "prefix":
			t.Prefix = vals
		case "glob":
			t.Glob = vals
		}
	case "gte", "lte":
		for _, b := range []struct {
			name string
			dst  **float64
		}{{"gte", &t.Gte}, {"lte", &t.Lte}} {
			if raw, ok := present(fields, b.name); ok {
				var f float64
				if json.Unmarshal(raw, &f) != nil {
					p[at+"."+b.name] = "must be a number"
					continue
				}
				*b.dst = &f
			}
		}
		if t.Gte != nil && t.Lte != nil && *t.Gte > *t.Lte {
			p[at+".lte"] = "must not be less than gte"
		}
	case "exists", "absent":
		var b bool
		if json.Unmarshal(fields[op], &b) != nil || !b {
			p[at+"."+op] = "must be true"
		}
		t.Exists, t.Absent = op == "exists", op == "absent"
	}
}

// parseValues reads the values of an operator: strings, at most
// MaxTargetingValues, each checked for what key takes.
func parseValues(raw json.RawMessage, at, key, op string, p Problems) []string {
	var vals []string
	if json.Unmarshal(raw, &vals) != nil || len(vals) == 0 {
		p[at] = "must be a non-empty array of strings"
		return nil
	}
	if len(vals) > MaxTargetingValues {
		p[at] = fmt.Sprintf("has %d values; at most %d", len(vals), MaxTargetingValues)
		return nil
	}
	out := make([]string, 0, len(vals))
	for i, v := range vals {
		if msg := checkValue(&v, key, op); msg != "" {
			p[fmt.Sprintf("%s[%d]", at, i)] = msg
			continue
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// checkValue normalises a rule's value *v for key and op, or says what is
// wrong with it.
func checkValue(v *string, key, op string) string {
	switch {
	case key == KeyIP:
		pr, err := netip.ParsePrefix(strings.TrimSpace(*v))
		if err != nil {
			a, err2 := netip.ParseAddr(strings.TrimSpace(*v))
			if err2 != nil {
				return fmt.Sprintf("must be a CIDR range (\"10.0.0.0/8\", \"2001:db8::/32\") or an address, got %q", *v)
			}
			pr = netip.PrefixFrom(a, a.BitLen())
		}
		*v = pr.Masked().String()
		return ""
	case key == KeyPath:
		s := strings.TrimSpace(*v)
		if !strings.HasPrefix(s, "/") || len(s) > 1000 || strings.ContainsAny(s, "?# ") {
			return fmt.Sprintf("must be a URL path starting with \"/\" (no query, no spaces), got %q", *v)
		}
		if op == "glob" {
			if _, err := path.Match(s, "/"); err != nil {
				return fmt.Sprintf("malformed glob %q: %v", s, err)
			}
		}
		*v = s
		return ""
	case key == KeyHost || key == KeyReferrer:
		s := strings.ToLower(strings.TrimSpace(*v))
		if op == "glob" {
			if _, err := path.Match(s, "x"); err != nil || s == "" {
				return fmt.Sprintf("malformed glob %q", *v)
			}
			*v = s
			return ""
		}
		h, msg := NormDomain(s)
		if msg != "" {
			return fmt.Sprintf("must be a host name (%s)", msg)
		}
		*v = h
		return ""
	case key == KeyDevice:
		s := strings.ToLower(strings.TrimSpace(*v))
		if !slices.Contains(DeviceTypes, s) {
			return fmt.Sprintf("must be one of %s, got %q", strings.Join(DeviceTypes, ", "), *v)
		}
		*v = s
		return ""
	case key == KeyCountry:
		s := strings.ToUpper(strings.TrimSpace(*v))
		if _, ok := CountrySlot(s); !ok {
			return fmt.Sprintf("must be an ISO 3166-1 alpha-2 code, got %q", *v)
		}
		*v = s
		return ""
	case key == KeyRegion:
		s := strings.ToUpper(strings.TrimSpace(*v))
		cc, sub, ok := strings.Cut(s, "-")
		if _, known := CountrySlot(cc); !ok || !known || sub == "" || len(sub) > 3 {
			return fmt.Sprintf("must be an ISO 3166-2 code (\"US-CA\", \"DE-BE\"), got %q", *v)
		}
		*v = s
		return ""
	case key == KeyLanguage:
		s := strings.ToLower(strings.TrimSpace(*v))
		if len(s) < 2 || len(s) > 3 || strings.ContainsFunc(s, func(r rune) bool { return r < 'a' || r > 'z' }) {
			return fmt.Sprintf("must be a primary language subtag (\"en\", \"de\"), got %q", *v)
		}
		*v = s
		return ""
	}
	s, ok := KVValue(*v)
	if !ok {
		return fmt.Sprintf("must be 1 to %d bytes without control characters", MaxKVValueLen)
	}
	*v = s
	return ""
}

// Walk calls fn for every node of t, parents first.
func (t *Targeting) Walk(fn func(*Targeting)) {
	if t == nil {
		return
	}
	fn(t)
	for i := range t.All {
		t.All[i].Walk(fn)
	}
	for i := range t.Any {
		t.Any[i].Walk(fn)
	}
	t.Not.Walk(fn)
}

// Uses says whether any rule of t reads one of keys.
func (t *Targeting) Uses(keys ...string) bool {
	found := false
	t.Walk(func(n *Targeting) { found = found || n.Key != "" && slices.Contains(keys, n.Key) })
	return found
}
