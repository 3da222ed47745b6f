package counterstest

import (
	"context"
	"sync"
	"testing"
	"time"

	"marquee/counters"
)

// Money is what the money contract checks (spend counters and touches).
type Money interface {
	AddSpend(ctx context.Context, adds []counters.Add, reads []string) ([]int64, error)
	PutTouches(ctx context.Context, ts []counters.Touch) error
	Touches(ctx context.Context, user uint64, advertiser int64) (imp, view counters.Seen, err error)
	ForgetTouches(ctx context.Context, user uint64) (int, error)
	Settle(ctx context.Context, draws []counters.Draw, n int64) (bool, []int64, error)
}

// RunMoney checks the money contract; open returns the counters of
// "instance" i, all of one test sharing their state.
func RunMoney(t *testing.T, open func(t *testing.T, instance int) Money) {
	ctx := context.Background()
	t.Run("spend adds up across instances, once each", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 3 {
			m := open(t, i)
			wg.Go(func() {
				for range 200 {
					if _, err := m.AddSpend(ctx, []counters.Add{{Key: "c1:t", N: 1_000_001}, {Key: "c1:d20261127", N: 3, TTL: time.Hour}}, nil); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		got, err := open(t, 0).AddSpend(ctx, nil, []string{"c1:t", "c1:d20261127", "c2:t"})
		if err != nil || len(got) != 3 || got[0] != 600*1_000_001 || got[1] != 600*3 || got[2] != 0 {
			t.Fatalf("totals = %v, %v; want [%d %d 0]", got, err, 600*1_000_001, 600*3)
		}
		got, err = open(t, 1).AddSpend(ctx, []counters.Add{{Key: "c1:t", N: 5}}, []string{"c1:d20261127"})
		if err != nil || len(got) != 2 || got[0] != 600*1_000_001+5 || got[1] != 1800 {
			t.Fatalf("add and read = %v, %v; want the add's total, then the read's", got, err)
		}
	})
	t.Run("settles never pass a limit, however many race", func(t *testing.T) {
		const cost = 1_000_001
		var wg sync.WaitGroup
		var mu sync.Mutex
		settled := 0
		for i := range 3 {
			m := open(t, i)
			wg.Go(func() {
				for range 200 {
					draws := []counters.Draw{{Key: "s1:t", Limit: 100 * cost, Floor: 0}, {Key: "s1:d20261127", Limit: counters.NoLimit, TTL: time.Hour},
						{Key: "a1:t", Limit: counters.NoLimit}}
					ok, totals, err := m.Settle(ctx, draws, cost)
					if err != nil || len(totals) != 3 {
						t.Errorf("Settle = %v, %v, %v", ok, totals, err)
						return
					}
					if totals[0] > 100*cost {
						t.Errorf("Settle answered total %d past the limit %d", totals[0], 100*cost)
					}
					if ok {
						mu.Lock()
						settled++
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		got, err := open(t, 0).AddSpend(ctx, nil, []string{"s1:t", "s1:d20261127", "a1:t"})
		if err != nil || settled != 100 || got[0] != 100*cost || got[1] != 100*cost || got[2] != 100*cost {
			t.Fatalf("settled %d, totals %v, %v; want 100 settled and every total %d", settled, got, err, 100*cost)
		}
	})
	t.Run("a settle reads a counter as at least its floor, exactly past 2^53", func(t *testing.T) {
		m := open(t, 0)
		const big = int64(1)<<60 + 1
		draws := []counters.Draw{{Key: "s2:t", Limit: big + 2, Floor: big}}
		for i, want := range []bool{true, true, false} {
			ok, totals, err := m.Settle(ctx, draws, 1)
			if err != nil || ok != want {
				t.Fatalf("settle %d = %v, %v, %v; want %v", i, ok, totals, err, want)
			}
			if wantTotal := big + int64(min(i+1, 2)); totals[0] != wantTotal {
				t.Fatalf("settle %d total = %d; want %d", i, totals[0], wantTotal)
			}
		}
		if ok, totals, _ := m.Settle(ctx, []counters.Draw{{Key: "s2:t", Limit: counters.NoLimit, Floor: 5}}, -2); !ok || totals[0] != big {
			t.Fatalf("a refund = %v, %v; want the total back at %d", ok, totals, big)
		}
	})
	t.Run("a later touch replaces an earlier, not the other way", func(t *testing.T) {
		a, b := open(t, 0), open(t, 1)
		put := func(m Money, kind byte, at int64, token string, verified bool) {
			t.Helper()
			if err := m.PutTouches(ctx, []counters.Touch{{User: 7, Advertiser: 3, Kind: kind, At: at, Verified: verified, Token: []byte(token), TTL: time.Hour}}); err != nil {
				t.Fatal(err)
			}
		}
		put(a, 'i', 1000, "first", true)
		put(b, 'i', 2000, "second", false)
		put(a, 'i', 1500, "late", true) // written after, but earlier
		put(b, 'v', 1200, "viewed", true)
		imp, view, err := a.Touches(ctx, 7, 3)
		if err != nil || imp.At != 2000 || string(imp.Token) != "second" || imp.Verified || view.At != 1200 || string(view.Token) != "viewed" || !view.Verified {
			t.Fatalf("Touches = %+v %+v, %v; want the impression of 2000 (unverified) and the view of 1200", imp, view, err)
		}
		if imp, view, err := b.Touches(ctx, 7, 4); err != nil || imp.At != 0 || view.At != 0 {
			t.Fatalf("another advertiser's touches = %+v %+v, %v; want none", imp, view, err)
		}
		b.PutTouches(ctx, []counters.Touch{{User: 7, Advertiser: 4, Kind: 'i', At: 2100, Token: []byte("another advertiser's"), TTL: time.Hour},
			{User: 8, Advertiser: 3, Kind: 'i', At: 10, Token: []byte("someone else"), TTL: time.Hour}})
		if n, err := a.ForgetTouches(ctx, 7); err != nil || n != 2 {
			t.Fatalf("ForgetTouches(7) = %d, %v; want user 7's touches of both advertisers", n, err)
		}
		if imp, view, _ := b.Touches(ctx, 7, 3); imp.At != 0 || view.At != 0 {
			t.Errorf("user 7's touches after an erasure = %+v %+v; want none", imp, view)
		}
		if imp, _, _ := b.Touches(ctx, 8, 3); imp.At != 10 {
			t.Errorf("user 8's touch after user 7's erasure = %+v; want it kept", imp)
		}
	})
}
