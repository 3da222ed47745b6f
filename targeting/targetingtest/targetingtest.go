// Package targetingtest is the brute-force reference of the targeting
// rule, and random trees and viewers to check an implementation against
// it: package targeting's compiled trees, and the decisions and explain
// of package delivery.
package targetingtest

import (
	"math/rand/v2"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
	"marquee/targeting"
)

// Plain is a viewer as the reference reads it: every key's values (the
// reserved ones too), an address and a time.
type Plain struct {
	Vals map[string][]string
	IP   netip.Addr
	At   time.Time
}

// Reference reads a tree the Plain way, straight from its definition
// (docs/targeting.md): no compiling, no sorting, no codes.
func Reference(t *marquee.Targeting, v Plain, loc *time.Location) bool {
	switch {
	case t.All != nil:
		for i := range t.All {
			if !Reference(&t.All[i], v, loc) {
				return false
			}
		}
		return true
	case t.Any != nil:
		for i := range t.Any {
			if Reference(&t.Any[i], v, loc) {
				return true
			}
		}
		return false
	case t.Not != nil:
		return !Reference(t.Not, v, loc)
	case t.DayPart != nil:
		lt := v.At.In(loc)
		day, minute := marquee.Weekdays[lt.Weekday()], lt.Hour()*60+lt.Minute()
		prev := marquee.Weekdays[(int(lt.Weekday())+6)%7]
		on := func(d string) bool { return len(t.DayPart.Days) == 0 || slices.Contains(t.DayPart.Days, d) }
		from, _ := marquee.ParseDayMinute(t.DayPart.From)
		to, _ := marquee.ParseDayMinute(t.DayPart.To)
		if from < to {
			return on(day) && from <= minute && minute < to
		}
		return on(day) && minute >= from || on(prev) && minute < to
	}
	if t.Key == marquee.KeyIP {
		in := false
		for _, c := range append(slices.Clone(t.In), t.NotIn...) {
			if p := netip.MustParsePrefix(c); v.IP.IsValid() && p.Contains(v.IP) {
				in = true
			}
		}
		switch {
		case t.Exists:
			return v.IP.IsValid()
		case t.Absent:
			return !v.IP.IsValid()
		case t.NotIn != nil:
			return !in
		}
		return in
	}
	vals := v.Vals[t.Key]
	anyOf := func(ok func(string) bool) bool {
		for _, s := range vals {
			if ok(s) {
				return true
			}
		}
		return false
	}
	switch {
	case t.In != nil:
		return anyOf(func(s string) bool { return slices.Contains(t.In, s) })
	case t.NotIn != nil:
		return !anyOf(func(s string) bool { return slices.Contains(t.NotIn, s) })
	case t.Prefix != nil:
		return anyOf(func(s string) bool {
			return slices.ContainsFunc(t.Prefix, func(p string) bool { return strings.HasPrefix(s, p) })
		})
	case t.Glob != nil:
		return anyOf(func(s string) bool {
			return slices.ContainsFunc(t.Glob, func(p string) bool { ok, _ := path.Match(p, s); return ok })
		})
	case t.Gte != nil || t.Lte != nil:
		return anyOf(func(s string) bool {
			f, err := strconv.ParseFloat(s, 64)
			return err == nil && (t.Gte == nil || f >= *t.Gte) && (t.Lte == nil || f <= *t.Lte)
		})
	case t.Exists:
		return len(vals) > 0
	}
	return len(vals) == 0 // absent
}

// Compiled is the viewer the edge would make of v.
func Compiled(v Plain) targeting.Viewer {
	var out targeting.Viewer
	for k, vals := range v.Vals {
		for _, s := range vals {
			switch k {
			case marquee.KeyDevice:
				out.Device = s
			case marquee.KeyPath:
				out.Path = s
			case marquee.KeyHost:
				out.Host = s
			case marquee.KeyCountry:
				out.SetCountry(s)
			case marquee.KeyLanguage:
				out.Language = s
			case marquee.KeySite:
				out.Site = s
			default:
				out.KV = append(out.KV, targeting.KV{Key: k, Value: s})
			}
		}
	}
	targeting.SortKVs(out.KV)
	out.IP = v.IP
	return out
}

// Gen makes random trees and viewers over a small vocabulary, so that
// rules and viewers meet often.
type Gen struct{ R *rand.Rand }

// Sites are the sites of the placements a tree may name.
var Sites = []string{"blog", "shop"}

var (
	kvKeys   = []string{"section", "tags", "pos", "score"}
	kvValues = []string{"sports", "news", "tech", "a", "b", "1", "2.5", "10"}
	domain   = map[string][]string{
		marquee.KeyDevice:   marquee.DeviceTypes,
		marquee.KeyPath:     {"/", "/sports/", "/sports/nba", "/news/x", "/news/"},
		marquee.KeyHost:     {"example.com", "www.example.com", "m.example.com", "other.org"},
		marquee.KeyCountry:  {"US", "DE", "TW"},
		marquee.KeyLanguage: {"en", "de", "zh"},
	}
	globs = map[string][]string{
		marquee.KeyPath: {"/sports/*", "/news/*", "/*"},
		marquee.KeyHost: {"*.example.com", "example.*"},
	}
	cidrs = []string{"10.0.0.0/8", "192.168.1.0/24", "2001:db8::/32", "8.8.8.8/32"}
	ips   = []string{"10.1.2.3", "192.168.1.9", "8.8.8.8", "2001:db8::1", "172.16.0.1"}
)

func (g Gen) some(from []string) []string {
	out := []string{from[g.R.IntN(len(from))]}
	for _, v := range from {
		if g.R.IntN(3) == 0 && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Tree is a random valid tree; depth is the depth of its root (1).
func (g Gen) Tree(depth int) marquee.Targeting {
	if depth < marquee.MaxTargetingDepth && g.R.IntN(3) == 0 {
		kids := make([]marquee.Targeting, 1+g.R.IntN(3))
		for i := range kids {
			kids[i] = g.Tree(depth + 1)
		}
		switch g.R.IntN(3) {
		case 0:
			return marquee.Targeting{All: kids}
		case 1:
			return marquee.Targeting{Any: kids}
		}
		return marquee.Targeting{Not: &kids[0]}
	}
	switch g.R.IntN(8) {
	case 0:
		d := &marquee.DayPart{From: minute(g.R.IntN(96) * 15), To: minute((1 + g.R.IntN(96)) * 15)}
		if d.From == d.To {
			d.To = "24:00"
		}
		if g.R.IntN(2) == 0 {
			d.Days = g.some(marquee.Weekdays)
		}
		return marquee.Targeting{DayPart: d}
	case 1:
		t := marquee.Targeting{Key: marquee.KeyIP}
		if g.R.IntN(2) == 0 {
			t.In = g.some(cidrs)
		} else {
			t.NotIn = g.some(cidrs)
		}
		return t
	case 2, 3:
		keys := []string{marquee.KeyDevice, marquee.KeyPath, marquee.KeyHost, marquee.KeyCountry, marquee.KeyLanguage, marquee.KeySite}
		if domain[marquee.KeySite] == nil {
			domain[marquee.KeySite] = Sites
		}
		k := keys[g.R.IntN(len(keys))]
		t := marquee.Targeting{Key: k}
		switch n := g.R.IntN(6); {
		case n == 0 && globs[k] != nil:
			t.Glob = g.some(globs[k])
		case n == 1 && k == marquee.KeyPath:
			t.Prefix = []string{"/sports/"}
		case n == 2:
			t.NotIn = g.some(domain[k])
		case n == 3:
			t.Exists = true
		case n == 4:
			t.Absent = true
		default:
			t.In = g.some(domain[k])
		}
		return t
	}
	t := marquee.Targeting{Key: kvKeys[g.R.IntN(len(kvKeys))]}
	switch g.R.IntN(6) {
	case 0:
		t.NotIn = g.some(kvValues)
	case 1:
		lo := float64(g.R.IntN(5))
		t.Gte = &lo
		if g.R.IntN(2) == 0 {
			hi := lo + float64(g.R.IntN(8))
			t.Lte = &hi
		}
	case 2:
		t.Exists = true
	case 3:
		t.Absent = true
	default:
		t.In = g.some(kvValues)
	}
	return t
}

func minute(m int) string {
	return strconv.Itoa(m/600) + strconv.Itoa(m/60%10) + ":" + strconv.Itoa(m%60/10) + strconv.Itoa(m%10)
}

// Viewer is a random viewer within a year after start; it has no $site
// (a placement's).
func (g Gen) Viewer(start time.Time) Plain {
	v := Plain{Vals: map[string][]string{}, At: start.Add(time.Duration(g.R.Int64N(int64(366 * 24 * time.Hour))))}
	for _, k := range kvKeys {
		for range g.R.IntN(3) {
			v.Vals[k] = append(v.Vals[k], kvValues[g.R.IntN(len(kvValues))])
		}
	}
	for k, from := range domain {
		if g.R.IntN(4) != 0 {
			v.Vals[k] = []string{from[g.R.IntN(len(from))]}
		}
	}
	if g.R.IntN(5) != 0 {
		v.IP = netip.MustParseAddr(ips[g.R.IntN(len(ips))])
	}
	return v
}
