package sqltx

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"marquee"
)

// ruleParsers read stored rules and destinations: a link cache's miss
// reads a link's, and encoding/json took 16 µs for five rules (fastjson:
// see BenchmarkDecodeRules).
var ruleParsers fastjson.ParserPool

// decodeRules reads rules as marquee.LinkRule's MarshalJSON writes them
// (the store keeps them so; they were checked when they were written).
func decodeRules(text string) ([]marquee.LinkRule, error) {
	p := ruleParsers.Get()
	defer ruleParsers.Put(p)
	v, err := p.Parse(text)
	if err != nil {
		return nil, err
	}
	items, err := v.Array()
	if err != nil {
		return nil, err
	}
	rules := make([]marquee.LinkRule, len(items))
	for i, it := range items {
		r := &rules[i]
		r.URL = string(it.GetStringBytes("url"))
		w := it.Get("when")
		if w == nil {
			return nil, fmt.Errorf("rule %d has no when", i)
		}
		r.When.Platforms, r.When.Languages, r.When.Countries = strs(w.GetArray("platform")), strs(w.GetArray("language")), strs(w.GetArray("country"))
		if q := w.GetObject("query"); q != nil {
			q.Visit(func(k []byte, v *fastjson.Value) {
				r.When.Query = append(r.When.Query, marquee.QueryMatch{Name: string(k), Value: string(v.GetStringBytes())})
			})
			slices.SortFunc(r.When.Query, func(a, b marquee.QueryMatch) int { return strings.Compare(a.Name, b.Name) })
		}
		for _, t := range []struct {
			key string
			dst *time.Time
		}{{"from", &r.When.From}, {"to", &r.When.To}} {
			if s := w.GetStringBytes(t.key); s != nil {
				if *t.dst, err = time.Parse(time.RFC3339Nano, string(s)); err != nil {
					return nil, fmt.Errorf("rule %d: %s: %w", i, t.key, err)
				}
			}
		}
	}
	return rules, nil
}

// decodeDestinations reads destinations as stored ([{url, weight}]).
func decodeDestinations(text string) ([]marquee.Destination, error) {
	p := ruleParsers.Get()
	defer ruleParsers.Put(p)
	v, err := p.Parse(text)
	if err != nil {
		return nil, err
	}
	items, err := v.Array()
	if err != nil {
		return nil, err
	}
	dests := make([]marquee.Destination, len(items))
	for i, it := range items {
		dests[i] = marquee.Destination{URL: string(it.GetStringBytes("url")), Weight: it.GetInt("weight")}
	}
	return dests, nil
}

// strs are the strings of an array, nil for none.
func strs(vs []*fastjson.Value) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v.GetStringBytes())
	}
	return out
}
