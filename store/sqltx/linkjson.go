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
	var rules []marquee.LinkRule
	err := eachItem(text, func(i, n int, it *fastjson.Value) error {
		if i == 0 {
			rules = make([]marquee.LinkRule, n)
		}
		r := &rules[i]
		r.URL = string(it.GetStringBytes("url"))
		w := it.Get("when")
		if w == nil {
			return fmt.Errorf("rule %d has no when", i)
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
				var err error
				if *t.dst, err = time.Parse(time.RFC3339Nano, string(s)); err != nil {
					return fmt.Errorf("rule %d: %s: %w", i, t.key, err)
				}
			}
		}
		return nil
	})
	return rules, err
}

// decodeDestinations reads destinations as stored ([{url, weight}]).
func decodeDestinations(text string) ([]marquee.Destination, error) {
	var dests []marquee.Destination
	err := eachItem(text, func(i, n int, it *fastjson.Value) error {
		if i == 0 {
			dests = make([]marquee.Destination, 0, n)
		}
		dests = append(dests, marquee.Destination{URL: string(it.GetStringBytes("url")), Weight: it.GetInt("weight")})
		return nil
	})
	return dests, err
}

// eachItem calls fn with each item of text, a JSON array, in order, and
// the array's length (the values live as long as the call).
func eachItem(text string, fn func(i, n int, it *fastjson.Value) error) error {
	p := ruleParsers.Get()
	defer ruleParsers.Put(p)
	v, err := p.Parse(text)
	if err != nil {
		return err
	}
	items, err := v.Array()
	if err != nil {
		return err
	}
	for i, it := range items {
		if err := fn(i, len(items), it); err != nil {
			return err
		}
	}
	return nil
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
