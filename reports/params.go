package reports

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"marquee"
)

// Params are a report request's parameters by name: a route's query
// (fasthttp.Args) or a saved report's (Query). Peek answers a
// parameter's first value, empty when it is absent.
type Params interface {
	Peek(key string) []byte
}

// QueryParams are the parameters of a URL query string, as a saved
// report keeps them (a value that does not decode is left out).
type QueryParams url.Values

// ParseQueryParams reads query ("by=campaign&from=…").
func ParseQueryParams(query string) QueryParams {
	v, _ := url.ParseQuery(query) // what decodes; the query was checked when it was saved
	return QueryParams(v)
}

// Peek answers key's first value.
func (q QueryParams) Peek(key string) []byte { return []byte(url.Values(q).Get(key)) }

// Param is key's value and whether it is given (not empty).
func Param(args Params, key string) ([]byte, bool) {
	v := args.Peek(key)
	return v, len(v) > 0
}

// ParamOneOf is k's value when it is one of allowed, def when it is not
// given; another value is a problem named in p (and def).
func ParamOneOf(args Params, p marquee.Problems, k string, def string, allowed ...string) string {
	v, ok := Param(args, k)
	if !ok {
		return def
	}
	for _, a := range allowed {
		if string(v) == a {
			return a
		}
	}
	p[k] = fmt.Sprintf("must be one of %q, got %q", allowed, v)
	return def
}

// ParamList is k's comma-separated values, trimmed, the empty ones left
// out (nil: not given).
func ParamList(args Params, k string) []string {
	v, ok := Param(args, k)
	if !ok {
		return nil
	}
	var out []string
	for part := range strings.SplitSeq(string(v), ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// ParamInt sets *dst to key's value when it is an integer in [lo, hi];
// another value is reported to bad, and *dst is left as it is.
func ParamInt(args Params, key string, lo, hi int, dst *int, bad func(k, msg string)) {
	v, ok := Param(args, key)
	if !ok {
		return
	}
	n, err := strconv.ParseUint(string(v), 10, 63)
	switch {
	case err == nil && int(n) >= lo && int(n) <= hi:
		*dst = int(n)
	case hi == math.MaxInt:
		bad(key, fmt.Sprintf("must be an integer ≥ %d", lo))
	default:
		bad(key, fmt.Sprintf("must be an integer between %d and %d", lo, hi))
	}
}

// ParamWindow reads a report's range and view from args: from and to (RFC
// 3339; default the last 7 days to now), tz (an IANA zone; default UTC)
// and bots (include or exclude, the default); problems are named in p.
func ParamWindow(args Params, rp *Reporter, p marquee.Problems) (from, to time.Time, loc *time.Location, bots bool) {
	now := rp.Now()
	from, to, loc = now.Add(-7*24*time.Hour), now, time.UTC
	timeArg := func(k string, dst *time.Time) {
		if v, ok := Param(args, k); ok {
			t, err := time.Parse(time.RFC3339Nano, string(v))
			if err != nil {
				p[k] = fmt.Sprintf("must be an RFC 3339 timestamp, got %q", v)
				return
			}
			*dst = t
		}
	}
	timeArg("from", &from)
	timeArg("to", &to)
	bots = ParamOneOf(args, p, "bots", "exclude", "exclude", "include") == "include"
	if v, ok := Param(args, "tz"); ok {
		l, err := marquee.ParseTimeZone(string(v))
		if err != nil {
			p["tz"] = err.Error()
		} else {
			loc = l
		}
	}
	return from, to, loc, bots
}
