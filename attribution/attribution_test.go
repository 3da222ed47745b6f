package attribution_test

import (
	"context"
	"testing"
	"time"

	"marquee"
	"marquee/attribution"
	"marquee/counters"
)

// TestChoose: a click within its post-click window wins (29 days after a
// click of a 30-day window; not 31); failing it, the last viewable
// impression, else the last impression, within the post-view window.
func TestChoose(t *testing.T) {
	day := 24 * time.Hour
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)
	tp := func(ago time.Duration, w marquee.Window) *attribution.Touchpoint {
		return &attribution.Touchpoint{At: now.Add(-ago), Window: w}
	}
	for _, c := range []struct {
		name            string
		click, view, im *attribution.Touchpoint
		want            string
	}{
		{"click 29 days ago", tp(29*day, marquee.DefaultPostClick), nil, nil, "click"},
		{"click 31 days ago", tp(31*day, marquee.DefaultPostClick), nil, nil, ""},
		{"click 31 days ago, a view an hour ago", tp(31*day, marquee.DefaultPostClick), tp(time.Hour, marquee.DefaultPostView), nil, "view"},
		{"click 2 days ago beats a view an hour ago", tp(2*day, marquee.DefaultPostClick), tp(time.Hour, marquee.DefaultPostView), tp(time.Minute, marquee.DefaultPostView), "click"},
		{"a view 25 hours ago is out, an impression an hour ago is in", nil, tp(25*time.Hour, marquee.DefaultPostView), tp(time.Hour, marquee.DefaultPostView), "impression"},
		{"a view beats a later impression", nil, tp(2*time.Hour, marquee.DefaultPostView), tp(time.Hour, marquee.DefaultPostView), "view"},
		{"nothing", nil, nil, nil, ""},
		{"a click in the future (forged clock)", tp(-time.Hour, marquee.DefaultPostClick), nil, nil, ""},
		{"a 0h post-view window attributes no view", nil, tp(time.Minute, 0), nil, ""},
	} {
		if got := attribution.Choose(c.click, c.view, c.im, now); got != c.want {
			t.Errorf("%s: Choose = %q; want %q", c.name, got, c.want)
		}
	}
}

// TestRecorderLast: a touch not yet flushed is read back with the
// store's; a flush that fails keeps the touches for the next.
func TestRecorderLast(t *testing.T) {
	ctx := context.Background()
	st := &flaky{MemoryMoney: counters.NewMemoryMoney(100)}
	r := attribution.NewRecorder(st)
	r.Touch(counters.Touch{User: 1, Advertiser: 2, Kind: 'i', At: 100, Token: []byte("a"), TTL: time.Hour})
	if imp, _, _ := r.Last(ctx, 1, 2); imp.At != 100 {
		t.Fatalf("Last before a flush = %+v; want the pending impression", imp)
	}
	st.fail = true
	if err := r.Flush(ctx); err == nil {
		t.Fatal("Flush into a failing store: no error")
	}
	st.fail = false
	r.Touch(counters.Touch{User: 1, Advertiser: 2, Kind: 'v', At: 150, Token: []byte("b"), TTL: time.Hour})
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	imp, view, err := st.Touches(ctx, 1, 2)
	if err != nil || imp.At != 100 || view.At != 150 || string(view.Token) != "b" {
		t.Fatalf("the store after a failed flush and a good one = %+v %+v, %v; want both touches", imp, view, err)
	}
}

type flaky struct {
	*counters.MemoryMoney
	fail bool
}

func (f *flaky) PutTouches(ctx context.Context, ts []counters.Touch) error {
	if f.fail {
		return context.DeadlineExceeded
	}
	return f.MemoryMoney.PutTouches(ctx, ts)
}
