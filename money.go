package marquee

import (
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Money (docs/api.md#money): amounts are integers of millionths of the
// install's one currency (-currency), never floats, so that billions of
// impressions add up to the micro-unit. An event's cost is kept in
// billionths (Nanos): an impression at a CPM of 2.000001 costs
// 2,000.001 micro-units, which is 2,000,001 nano-units, exactly.

// Micros is an amount of money in millionths of the currency.
type Micros int64

// Nanos is an amount of money in billionths of the currency: what one
// event costs (a thousandth of a CPM price is a whole number of them).
type Nanos int64

// MaxAmount is the largest amount a price, a budget or a conversion's
// value may be: a billion of the currency (1e15 micro-units, far from
// int64's limit however many are added).
const MaxAmount Micros = 1_000_000_000 * 1_000_000

// ErrAmount is the problem of a string that is not an amount.
var ErrAmount = errors.New("must be a decimal number from 0 to 1000000000 with at most 6 decimals (e.g. 2.50)")

// ParseMicros reads a decimal amount of the currency ("2.5", "0.000001",
// "1000") exactly, into micro-units: digits, at most one point, at most
// six decimals, from 0 to MaxAmount. No sign, no exponent.
func ParseMicros(s string) (Micros, error) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" && (!dot || frac == "") || len(frac) > 6 || dot && frac == "" || len(whole) > 10 {
		return 0, ErrAmount
	}
	var m int64
	for _, part := range []string{whole, frac + strings.Repeat("0", 6-len(frac))} {
		for _, c := range []byte(part) {
			if c < '0' || c > '9' {
				return 0, ErrAmount
			}
			m = m*10 + int64(c-'0')
		}
	}
	if Micros(m) > MaxAmount {
		return 0, ErrAmount
	}
	return Micros(m), nil
}

// ParseAmount reads an amount given in JSON: a number or a string of one
// (ParseMicros's rules).
func ParseAmount(raw json.RawMessage) (Micros, error) {
	var s string
	if firstByte(raw) == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return 0, ErrAmount
		}
	} else {
		s = string(raw)
	}
	return ParseMicros(s)
}

// String is m as a decimal of the currency, without trailing zeros
// ("2.5", "1000", "-0.000001").
func (m Micros) String() string {
	neg := m < 0
	u := uint64(m)
	if neg {
		u = uint64(-m)
	}
	s := strconv.FormatUint(u/1e6, 10)
	if f := u % 1e6; f != 0 {
		fs := strconv.FormatUint(f+1e6, 10)[1:]
		s += "." + strings.TrimRight(fs, "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// MarshalJSON writes m as a JSON number of the currency, exactly.
func (m Micros) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalJSON reads a JSON number (or string) of the currency,
// exactly; an amount stored before amounts were held to six decimals is
// rounded to micro-units.
func (m *Micros) UnmarshalJSON(b []byte) error {
	v, err := ParseAmount(b)
	if err != nil {
		f, ferr := strconv.ParseFloat(strings.Trim(string(b), `"`), 64)
		if ferr != nil || f < 0 || f > MaxAmount.Float() {
			return err
		}
		v = Micros(math.Round(f * 1e6))
	}
	*m = v
	return nil
}

// Float is m in units of the currency, for ratios and display.
func (m Micros) Float() float64 { return float64(m) / 1e6 }

// Micros rounds n to micro-units, half away from zero.
func (n Nanos) Micros() Micros {
	if n < 0 {
		return -(-n).Micros()
	}
	return Micros((n + 500) / 1000)
}

// Nanos is m in nano-units.
func (m Micros) Nanos() Nanos { return Nanos(m) * 1000 }

// MulDiv is m × num ÷ den (all ≥ 0, den > 0), rounded half up: the
// product is taken in 128 bits, so it never overflows where the result
// fits; a result past int64 is held at its largest.
func (m Micros) MulDiv(num, den int64) Micros {
	if m <= 0 || num <= 0 || den <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(m), uint64(num))
	if hi >= uint64(den) {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(den))
	if r >= uint64(den)-r {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return Micros(q)
}

// Budget is what a campaign or an advertiser may spend: each day (in its
// time zone) and over its life; 0 is no limit. Spend counts only
// verified events (docs/api.md#budgets).
type Budget struct {
	Daily Micros `json:"daily,omitempty"`
	Total Micros `json:"total,omitempty"`
	// Currency as Price's: the install's, or "" when not given.
	Currency string `json:"currency,omitempty"`
}

// parseBudget reads a budget object at field (the problems' path).
func parseBudget(raw json.RawMessage, field string, p Problems) *Budget {
	fields, ok := subObject(raw, field, p, "daily", "total", "currency")
	if !ok {
		return nil
	}
	b := &Budget{Currency: currencyField(fields, field+".currency", p)}
	for _, part := range []struct {
		name string
		into *Micros
	}{{"daily", &b.Daily}, {"total", &b.Total}} {
		a, ok := present(fields, part.name)
		if !ok {
			continue
		}
		m, err := ParseAmount(a)
		switch {
		case err != nil:
			p[field+"."+part.name] = err.Error()
		case m == 0:
			p[field+"."+part.name] = "must be more than 0 (leave it out for no limit)"
		default:
			*part.into = m
		}
	}
	if _, bad := p[field+".daily"]; !bad && b.Daily == 0 && b.Total == 0 {
		if _, bad := p[field+".total"]; !bad {
			p[field] = "needs a daily amount, a total, or both"
		}
	}
	if b.Daily > 0 && b.Total > 0 && b.Daily > b.Total {
		p[field+".daily"] = "must not be more than the total"
	}
	return b
}

// currencyField reads an optional ISO 4217 code at key (upper-cased; ""
// when absent); whether it is the install's is the caller's to check
// (CheckCurrency).
func currencyField(fields map[string]json.RawMessage, key string, p Problems) string {
	raw, ok := present(fields, key[strings.LastIndexByte(key, '.')+1:])
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || len(s) != 3 {
		p[key] = "must be an ISO 4217 currency code (\"USD\")"
		return ""
	}
	return strings.ToUpper(s)
}

// CheckCurrency names the problem of an amount given in currency given
// ("" when none was) where the install counts money in install: "" when
// there is none.
func CheckCurrency(given, install string) string {
	if given == "" || strings.EqualFold(given, install) {
		return ""
	}
	return "is " + given + ", but this install counts money in " + install + " (one currency per install: -currency)"
}

// DayStart is the start of t's day in loc: its local midnight (where a
// zone skips midnight, the instant time.Date makes of it).
func DayStart(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// NextDay is the start of the day after the one day starts (a day's
// start in loc, as DayStart gives it): 23, 24 or 25 hours later.
func NextDay(day time.Time, loc *time.Location) time.Time {
	return DayStart(day.Add(26*time.Hour), loc)
}

// DayNumber is t's day in loc as yyyymmdd: what a daily budget's spend
// is kept under.
func DayNumber(t time.Time, loc *time.Location) int64 {
	y, m, d := t.In(loc).Date()
	return int64(y)*10000 + int64(m)*100 + int64(d)
}
