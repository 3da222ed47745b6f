package targeting

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"marquee"
)

// Tree is a marquee.Targeting compiled: values sorted, CIDRs parsed,
// day-parts as minutes of the day in their time zone. It is never
// mutated after CompileTree; Matches allocates nothing.
type Tree struct {
	root  rule
	loc   *time.Location
	needs Needs
	// The top-level rules a Filter indexes, and the rest (see split).
	indexed, rest []*rule
	id            uint64 // unique among the trees compiled (ID)
}

// trees numbers the trees compiled.
var trees atomic.Uint64

// ID tells trees apart: two trees have one ID only if they are one tree
// (0 for none). What is built from trees (a Filter) can be kept by their
// IDs.
func (t *Tree) ID() uint64 {
	if t == nil {
		return 0
	}
	return t.id
}

// Needs says which of a Viewer's fields trees read, so that the edge
// fills only those (a User-Agent is parsed only when a tree reads the
// device, browser or OS).
type Needs uint16

// What a tree may read beyond the contract's fields.
const (
	NeedKV       Needs = 1 << iota // the request's key-values
	NeedPage                       // host and path of the page URL
	NeedReferrer                   // the referrer's host
	NeedGeo                        // region, city, metro
	NeedDevice                     // device type, browser, OS (the User-Agent)
	NeedLanguage                   // the viewer's language
	NeedIP                         // the viewer's address
	NeedTime                       // a day-part
)

// Operators of a compiled rule.
const (
	opAll = iota
	opAny
	opNot
	opIn
	opNotIn
	opPrefix
	opGlob
	opRange
	opExists
	opAbsent
	opDayPart
)

// Fields a rule reads: a publisher's key (fieldKV) or a reserved key.
const (
	fieldKV = iota
	fieldHost
	fieldPath
	fieldReferrer
	fieldSite
	fieldCountry
	fieldRegion
	fieldCity
	fieldMetro
	fieldDevice
	fieldBrowser
	fieldOS
	fieldLanguage
	fieldIP
)

// reserved maps the reserved keys to their fields and what they need.
var reserved = map[string]struct {
	field uint8
	needs Needs
}{
	marquee.KeyHost: {fieldHost, NeedPage}, marquee.KeyPath: {fieldPath, NeedPage}, marquee.KeyReferrer: {fieldReferrer, NeedReferrer},
	marquee.KeySite: {fieldSite, 0}, marquee.KeyCountry: {fieldCountry, 0}, marquee.KeyRegion: {fieldRegion, NeedGeo},
	marquee.KeyCity: {fieldCity, NeedGeo}, marquee.KeyMetro: {fieldMetro, NeedGeo}, marquee.KeyDevice: {fieldDevice, NeedDevice},
	marquee.KeyBrowser: {fieldBrowser, NeedDevice}, marquee.KeyOS: {fieldOS, NeedDevice}, marquee.KeyLanguage: {fieldLanguage, NeedLanguage},
	marquee.KeyIP: {fieldIP, NeedIP},
}

type rule struct {
	op, field uint8
	key       string
	vals      []string // in, notIn (sorted); prefix, glob
	nets      []netip.Prefix
	lo, hi    float64 // opRange; ±Inf when open
	days      uint8   // opDayPart: 1<<time.Weekday
	from, to  int     // opDayPart: minutes of the day; to < from runs past midnight
	kids      []rule
}

// CompileTree compiles t, its day-parts in the time zone loc (nil: UTC);
// nil for no tree. t is as marquee's parser left it (valid).
func CompileTree(t *marquee.Targeting, loc *time.Location) *Tree {
	if t == nil {
		return nil
	}
	out := &Tree{loc: cmp.Or(loc, time.UTC), id: trees.Add(1)}
	out.root = out.compile(t)
	out.split()
	return out
}

// Needs says what the tree reads of a viewer.
func (t *Tree) Needs() Needs {
	if t == nil {
		return 0
	}
	return t.needs
}

func (t *Tree) compile(n *marquee.Targeting) rule {
	var r rule
	switch {
	case n.All != nil || n.Any != nil:
		r.op = opAll
		kids := n.All
		if n.Any != nil {
			r.op, kids = opAny, n.Any
		}
		r.kids = make([]rule, len(kids))
		for i := range kids {
			r.kids[i] = t.compile(&kids[i])
		}
	case n.Not != nil:
		r.op, r.kids = opNot, []rule{t.compile(n.Not)}
	case n.DayPart != nil:
		r.op = opDayPart
		t.needs |= NeedTime
		for _, d := range n.DayPart.Days {
			r.days |= 1 << slices.Index(marquee.Weekdays, d)
		}
		if r.days == 0 {
			r.days = 0x7f
		}
		r.from, _ = marquee.ParseDayMinute(n.DayPart.From)
		r.to, _ = marquee.ParseDayMinute(n.DayPart.To)
	default:
		r.key = n.Key
		if f, ok := reserved[n.Key]; ok {
			r.field = f.field
			t.needs |= f.needs
		} else {
			t.needs |= NeedKV
		}
		switch {
		case n.In != nil:
			r.op, r.vals = opIn, sorted(n.In)
		case n.NotIn != nil:
			r.op, r.vals = opNotIn, sorted(n.NotIn)
		case n.Prefix != nil:
			r.op, r.vals = opPrefix, n.Prefix
		case n.Glob != nil:
			r.op, r.vals = opGlob, n.Glob
		case n.Gte != nil || n.Lte != nil:
			r.op, r.lo, r.hi = opRange, math.Inf(-1), math.Inf(1)
			if n.Gte != nil {
				r.lo = *n.Gte
			}
			if n.Lte != nil {
				r.hi = *n.Lte
			}
		case n.Exists:
			r.op = opExists
		default:
			r.op = opAbsent
		}
		if r.field == fieldIP && (r.op == opIn || r.op == opNotIn) {
			for _, v := range r.vals {
				if p, err := netip.ParsePrefix(v); err == nil {
					r.nets = append(r.nets, p)
				}
			}
		}
	}
	return r
}

func sorted(vals []string) []string {
	out := slices.Clone(vals)
	slices.Sort(out)
	return out
}

// KV is one of a request's key-value pairs, both as marquee.KVKey and
// marquee.KVValue leave them (lower case).
type KV struct{ Key, Value string }

// SortKVs sorts pairs by key then value, which the edge does once.
func SortKVs(kvs []KV) {
	slices.SortFunc(kvs, func(a, b KV) int { return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Value, b.Value)) })
}

// Matches reports whether v meets the tree at at (unix ns). A rule on a
// value v does not have fails in, prefix, glob, range and exists, and
// holds for notIn and absent: a campaign for section sports never serves
// a page that names no section, and one that excludes news serves it. It
// allocates nothing.
func (t *Tree) Matches(v *Viewer, at int64) bool {
	return t.MatchesIn(v, at, nil)
}

// MatchesIn is Matches with the day-parts read in loc (an ad's tree, in
// its campaign's time zone); nil loc: the tree's own.
func (t *Tree) MatchesIn(v *Viewer, at int64, loc *time.Location) bool {
	if t == nil {
		return true
	}
	var c clock
	return t.match(&t.root, v, at, cmp.Or(loc, t.loc), &c)
}

// clock is the local time of a match's instant in its zone, read once
// for its day-parts. It holds no pointer (the zone is match's): a clock
// in a decision's scratch stays on its stack.
type clock struct {
	read     bool
	day, min int
}

// local is the weekday and the minute of the day of at in loc.
func (c *clock) local(at int64, loc *time.Location) (day, min int) {
	if !c.read {
		lt := time.Unix(0, at).In(loc)
		c.read, c.day, c.min = true, int(lt.Weekday()), lt.Hour()*60+lt.Minute()
	}
	return c.day, c.min
}

// Clock is the local time of one instant in the last time zone read,
// for the trees matched at that instant (a decision's): the day-parts of
// trees of one time zone read the clock once. The zero Clock is ready.
type Clock struct {
	loc *time.Location
	clock
}

func (t *Tree) match(r *rule, v *Viewer, at int64, loc *time.Location, c *clock) bool {
	switch r.op {
	case opAll:
		for i := range r.kids {
			if !t.match(&r.kids[i], v, at, loc, c) {
				return false
			}
		}
		return true
	case opAny:
		for i := range r.kids {
			if t.match(&r.kids[i], v, at, loc, c) {
				return true
			}
		}
		return false
	case opNot:
		return !t.match(&r.kids[0], v, at, loc, c)
	case opDayPart:
		return r.dayPartHas(c.local(at, loc))
	}
	if r.field == fieldIP {
		return r.matchIP(v.IP)
	}
	if r.field != fieldKV {
		return r.matchOne(v.field(r.field))
	}
	// A publisher's key: any of its values (a key may be sent with many).
	vals := v.values(r.key)
	switch r.op {
	case opExists:
		return len(vals) > 0
	case opAbsent:
		return len(vals) == 0
	case opNotIn:
		for _, kv := range vals {
			if r.has(kv.Value) {
				return false
			}
		}
		return true
	}
	for _, kv := range vals {
		if r.matchOne(kv.Value) {
			return true
		}
	}
	return false
}

// dayPartHas says whether the local day and minute fall in the day-part.
func (r *rule) dayPartHas(day, min int) bool {
	if r.from < r.to {
		return r.days&(1<<day) != 0 && min >= r.from && min < r.to
	}
	// Past midnight: the evening of a day of the part, or the early
	// morning after one.
	return r.days&(1<<day) != 0 && min >= r.from || r.days&(1<<((day+6)%7)) != 0 && min < r.to
}

// matchOne matches one value s ("" when the viewer has none).
func (r *rule) matchOne(s string) bool {
	switch r.op {
	case opExists:
		return s != ""
	case opAbsent:
		return s == ""
	case opNotIn:
		return s == "" || !r.has(s)
	}
	if s == "" {
		return false
	}
	switch r.op {
	case opIn:
		return r.has(s)
	case opPrefix:
		for _, p := range r.vals {
			if strings.HasPrefix(s, p) {
				return true
			}
		}
	case opGlob:
		for _, p := range r.vals {
			if ok, _ := path.Match(p, s); ok {
				return true
			}
		}
	case opRange:
		f, err := strconv.ParseFloat(s, 64)
		return err == nil && f >= r.lo && f <= r.hi
	}
	return false
}

func (r *rule) has(s string) bool {
	if len(r.vals) <= 8 {
		return slices.Contains(r.vals, s)
	}
	_, ok := slices.BinarySearch(r.vals, s)
	return ok
}

func (r *rule) matchIP(a netip.Addr) bool {
	switch r.op {
	case opExists:
		return a.IsValid()
	case opAbsent:
		return !a.IsValid()
	}
	in := false
	if a.IsValid() {
		a = a.Unmap()
		for _, p := range r.nets {
			if p.Contains(a) {
				in = true
				break
			}
		}
	}
	if r.op == opNotIn {
		return !in
	}
	return in
}

// values are v's pairs of key (KV sorted: a run of them).
func (v *Viewer) values(key string) []KV {
	i, _ := slices.BinarySearchFunc(v.KV, key, func(kv KV, k string) int { return cmp.Compare(kv.Key, k) })
	j := i
	for j < len(v.KV) && v.KV[j].Key == key {
		j++
	}
	return v.KV[i:j]
}

// field is the value of a reserved field ("" when unknown).
func (v *Viewer) field(f uint8) string {
	switch f {
	case fieldHost:
		return v.Host
	case fieldPath:
		return v.Path
	case fieldReferrer:
		return v.Referrer
	case fieldSite:
		return v.Site
	case fieldCountry:
		return v.CountryCode()
	case fieldRegion:
		return v.Region
	case fieldCity:
		return v.City
	case fieldMetro:
		return v.Metro
	case fieldDevice:
		return v.Device
	case fieldBrowser:
		return v.Browser
	case fieldOS:
		return v.OS
	case fieldLanguage:
		return v.Language
	}
	return ""
}

// Why says which rule of the tree v fails at at, in ad operations' words
// ("kv section: sports not in [news]", "day-part: Sat 23:10
// America/New_York outside Mon–Fri 08:00–20:00"), or "" when v meets it.
// For explain: it allocates.
func (t *Tree) Why(v *Viewer, at int64) string {
	return t.WhyIn(v, at, nil)
}

// WhyIn is Why with the day-parts read in loc (nil: the tree's own).
func (t *Tree) WhyIn(v *Viewer, at int64, loc *time.Location) string {
	if t.MatchesIn(v, at, loc) {
		return ""
	}
	return t.why(&t.root, v, at, cmp.Or(loc, t.loc))
}

func (t *Tree) why(r *rule, v *Viewer, at int64, loc *time.Location) string {
	var c clock
	switch r.op {
	case opAll:
		for i := range r.kids {
			if !t.match(&r.kids[i], v, at, loc, &c) {
				return t.why(&r.kids[i], v, at, loc)
			}
		}
	case opAny:
		parts := make([]string, len(r.kids))
		for i := range r.kids {
			parts[i] = t.why(&r.kids[i], v, at, loc)
		}
		return "none of: " + strings.Join(parts, "; ")
	case opNot:
		return "not (" + t.describe(&r.kids[0]) + ") matched"
	case opDayPart:
		lt := time.Unix(0, at).In(loc)
		return fmt.Sprintf("day-part: %s %s outside %s", lt.Format("Mon 15:04"), loc, t.describe(r))
	}
	name, seen := r.name(), r.seen(v)
	list := "[" + strings.Join(r.vals, ", ") + "]"
	switch r.op {
	case opIn:
		return name + ": " + seen + " not in " + list
	case opNotIn:
		return name + ": " + seen + " excluded by " + list
	case opPrefix:
		return name + ": " + seen + " not starting with " + list
	case opGlob:
		return name + ": " + seen + " not like " + list
	case opRange:
		return fmt.Sprintf("%s: %s not from %g to %g", name, seen, r.lo, r.hi)
	case opExists:
		return name + ": none sent, wanted present"
	}
	return name + ": " + seen + " sent, wanted absent"
}

// name is the rule's key as why and describe show it.
func (r *rule) name() string {
	if r.field == fieldKV {
		return "kv " + r.key
	}
	return r.key
}

// seen is what the viewer has of the rule's field, as why shows it.
func (r *rule) seen(v *Viewer) string {
	var vals []string
	switch r.field {
	case fieldKV:
		for _, kv := range v.values(r.key) {
			vals = append(vals, kv.Value)
		}
	case fieldIP:
		if v.IP.IsValid() {
			vals = append(vals, v.IP.String())
		}
	default:
		if s := v.field(r.field); s != "" {
			vals = append(vals, s)
		}
	}
	if len(vals) == 0 {
		return "none sent"
	}
	return strings.Join(vals, ", ")
}

// describe is a rule in ad operations' words.
func (t *Tree) describe(r *rule) string {
	switch r.op {
	case opAll, opAny:
		parts := make([]string, len(r.kids))
		for i := range r.kids {
			parts[i] = t.describe(&r.kids[i])
		}
		sep := " and "
		if r.op == opAny {
			sep = " or "
		}
		return strings.Join(parts, sep)
	case opNot:
		return "not (" + t.describe(&r.kids[0]) + ")"
	case opDayPart:
		days := "every day"
		if r.days != 0x7f {
			var names []string
			for d := range 7 {
				if r.days&(1<<d) != 0 {
					names = append(names, time.Weekday(d).String()[:3])
				}
			}
			days = strings.Join(names, ",")
		}
		return fmt.Sprintf("%s %02d:%02d–%02d:%02d", days, r.from/60, r.from%60, r.to/60, r.to%60)
	}
	name, list := r.name(), "["+strings.Join(r.vals, ", ")+"]"
	switch r.op {
	case opIn:
		return name + " in " + list
	case opNotIn:
		return name + " not in " + list
	case opPrefix:
		return name + " starting with " + list
	case opGlob:
		return name + " like " + list
	case opRange:
		return fmt.Sprintf("%s from %g to %g", name, r.lo, r.hi)
	case opExists:
		return name + " present"
	}
	return name + " absent"
}

// Hash is a hash of what trees read of v (0 when it has none of it): a
// memo of decisions keyed by the viewer tells viewers apart by it.
func (v *Viewer) Hash() uint64 {
	var h uint64
	for _, kv := range v.KV {
		h ^= HashKV(kv)
	}
	for i, s := range [...]string{v.Host, v.Path, v.Referrer, v.Region, v.City, v.Metro, v.Device, v.Browser, v.OS, v.Language} {
		if s != "" {
			h ^= maphash.String(seed, s) * uint64(2*i+3)
		}
	}
	if v.IP.IsValid() {
		h ^= maphash.Comparable(seed, v.IP)
	}
	return h
}

// HashKV is a hash of one key-value pair.
func HashKV(kv KV) uint64 { return maphash.String(seed, kv.Key) ^ maphash.String(seed, kv.Value)*31 }

var seed = maphash.MakeSeed()

// IndexKey is a publisher's key every viewer the tree takes must have one
// of vals of (sorted): the tree is such a rule, or all of rules one of
// which is. ok is false when it has none. Decisions index campaigns by it,
// so that a request weighs only the campaigns of its own key-values.
func (t *Tree) IndexKey() (key string, vals []string, ok bool) {
	if t == nil {
		return "", nil, false
	}
	r := &t.root
	if r.op == opAll {
		for i := range r.kids {
			if k := &r.kids[i]; k.op == opIn && k.field == fieldKV {
				return k.key, k.vals, true
			}
		}
	}
	if r.op == opIn && r.field == fieldKV {
		return r.key, r.vals, true
	}
	return "", nil, false
}
