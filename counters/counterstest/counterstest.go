// Package counterstest is the contract every frequency cap counter
// meets, run against each (in memory, Redis) by their tests.
package counterstest

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marquee/counters"
	"marquee/ivt"
)

// Counters are what the contract checks (delivery.Counters).
type Counters interface {
	Reached(ctx context.Context, user uint64, now time.Time, into []counters.Reached) ([]counters.Reached, error)
	Take(ctx context.Context, user uint64, now time.Time, takes []counters.Take, took []int, reached []counters.Reached) ([]counters.Reached, error)
	Forget(ctx context.Context, user uint64) (int, error)
}

// take1 takes one serve.
func take1(c Counters, ctx context.Context, user uint64, campaign int64, count int, within time.Duration, now time.Time) (bool, error) {
	var took [1]int
	_, err := c.Take(ctx, user, now, []counters.Take{{Campaign: campaign, Count: count, Within: within}}, took[:], nil)
	return took[0] > 0, err
}

// campaigns lists the campaigns of reached caps, in order.
func campaigns(reached []counters.Reached) []int64 {
	var ids []int64
	for _, r := range reached {
		ids = append(ids, r.Campaign)
	}
	return ids
}

// Run checks the contract; open returns a fresh counter for "instance" i,
// all of one test sharing their state (one Redis), or the same one.
// Times are whole milliseconds (Redis keeps milliseconds).
func Run(t *testing.T, open func(t *testing.T, instance int) Counters) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	t.Run("Cap", func(t *testing.T) {
		c := open(t, 0)
		for i := range 5 {
			took, err := take1(c, ctx, 7, 3, 3, time.Hour, now.Add(time.Duration(i)*time.Minute))
			if err != nil || took != (i < 3) {
				t.Fatalf("take %d = %v, %v; want %v (cap 3 an hour)", i, took, err, i < 3)
			}
		}
		want := counters.Reached{Campaign: 3, Until: now.Add(time.Hour).UnixNano(), Count: 3, Within: time.Hour}
		if got, err := c.Reached(ctx, 7, now.Add(5*time.Minute), nil); err != nil || !slices.Equal(got, []counters.Reached{want}) {
			t.Errorf("Reached(7) at +5m = %v, %v; want %v (room again an hour after the first serve)", got, err, want)
		}
		if !counters.Blocks([]counters.Reached{want}, 3, 3, time.Hour, now.Add(59*time.Minute).UnixNano()) ||
			counters.Blocks([]counters.Reached{want}, 3, 3, time.Hour, now.Add(time.Hour).UnixNano()) {
			t.Error("Blocks: want the cap reached until an hour after the first serve, and not at that hour")
		}
		if got, _ := c.Reached(ctx, 7, now.Add(time.Hour), nil); len(got) != 0 {
			t.Errorf("Reached(7) at +1h = %v; want none", got)
		}
		if took, _ := take1(c, ctx, 7, 3, 3, time.Hour, now.Add(61*time.Minute)); !took {
			t.Error("an hour after the first serve, the window has room again: refused")
		}
		if took, _ := take1(c, ctx, 8, 3, 3, time.Hour, now); !took {
			t.Error("another user was refused")
		}
		if took, _ := take1(c, ctx, 7, 4, 3, time.Hour, now); !took {
			t.Error("another campaign was refused")
		}
		take1(c, ctx, 7, 5, 1, time.Hour, now.Add(62*time.Minute))
		prefix := []counters.Reached{{Campaign: 99}}
		if got, _ := c.Reached(ctx, 7, now.Add(62*time.Minute), prefix); !slices.Equal(campaigns(got), []int64{99, 5}) {
			t.Errorf("Reached(7, one cap) = %v; want that cap, then campaign 5's appended (3 has room again)", got)
		}
		if got, err := c.Reached(ctx, 999, now, nil); err != nil || len(got) != 0 {
			t.Errorf("Reached of a new user = %v, %v", got, err)
		}
	})
	t.Run("Batch", func(t *testing.T) {
		c := open(t, 0)
		take1(c, ctx, 5, 2, 1, time.Hour, now) // campaign 2 is at its cap of 1
		takes := []counters.Take{{Campaign: 1, Count: 2, Within: time.Hour}, {Campaign: 2, Count: 1, Within: time.Hour}, {Campaign: 3, Count: 1, Within: 24 * time.Hour}}
		took := make([]int, 3)
		prefix := []counters.Reached{{Campaign: 99}}
		got, err := c.Take(ctx, 5, now, takes, took, prefix)
		if err != nil || !slices.Equal(took, []int{1, 0, 1}) {
			t.Fatalf("a batch of three, the second capped = %v, %v; want [1 0 1] (serves within the window once taken; 0: refused)", took, err)
		}
		if ids := campaigns(got); !slices.Equal(ids, []int64{99, 2, 3}) {
			t.Errorf("after a refusal, the reached caps appended = %v; want the prefix, then campaigns 2 and 3 (each at a cap of 1), by id", ids)
		}
		got, err = c.Take(ctx, 5, now, takes[:1], took[:1], nil)
		if err != nil || took[0] != 2 || got != nil {
			t.Fatalf("campaign 1 again = %v, %v, %v; want its second serve (2), nothing appended without a refusal", took[0], got, err)
		}
		if got, _ := c.Reached(ctx, 5, now, nil); !slices.Equal(campaigns(got), []int64{1, 2, 3}) {
			t.Errorf("after the batches: %v; want campaigns 1, 2 and 3 reached", got)
		}
	})
	t.Run("CapEdited", func(t *testing.T) {
		c := open(t, 0)
		take1(c, ctx, 6, 1, 1, time.Hour, now)
		got, _ := c.Reached(ctx, 6, now, nil)
		if len(got) != 1 || counters.Blocks(got, 1, 2, time.Hour, now.UnixNano()) || counters.Blocks(got, 1, 1, 24*time.Hour, now.UnixNano()) {
			t.Errorf("a cap of 1 an hour reached = %v; want it to block that cap only, not 2 an hour or 1 a day", got)
		}
		if took, _ := take1(c, ctx, 6, 1, 2, time.Hour, now.Add(time.Minute)); !took {
			t.Error("the cap raised to 2 an hour: the second serve was refused")
		}
		if took, _ := take1(c, ctx, 6, 1, 2, time.Hour, now.Add(2*time.Minute)); took {
			t.Error("the cap raised to 2 an hour: a third serve was taken")
		}
	})
	t.Run("Keep", func(t *testing.T) {
		c := open(t, 0)
		taken := 0
		for i := range counters.Keep + 10 {
			if ok, _ := take1(c, ctx, 1, 1, 1_000_000, time.Hour, now.Add(time.Duration(i)*time.Second)); ok {
				taken++
			}
		}
		if taken != counters.Keep {
			t.Errorf("a cap of 1,000,000 (stored before counts were limited): %d taken; want it held at %d", taken, counters.Keep)
		}
	})
	t.Run("ThreeInstancesAtOnce", func(t *testing.T) {
		cs := []Counters{open(t, 0), open(t, 1), open(t, 2)}
		var took atomic.Int64
		var wg sync.WaitGroup
		for g := range 30 {
			wg.Go(func() {
				for range 10 {
					ok, err := take1(cs[g%3], ctx, 42, 9, 5, 24*time.Hour, now)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						took.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if n := took.Load(); n != 5 {
			t.Errorf("300 takes at once over three instances, cap 5: %d taken; want exactly 5", n)
		}
	})
	t.Run("Forget", func(t *testing.T) {
		c := open(t, 0)
		for i := range 3 {
			take1(c, ctx, 77, int64(10+i), 5, time.Hour, now)
		}
		take1(c, ctx, 78, 10, 1, time.Hour, now)
		n, err := c.Forget(ctx, 77)
		if err != nil || n != 3 {
			t.Errorf("Forget(77) = %d, %v; want its 3 serves forgotten", n, err)
		}
		if took, _ := take1(c, ctx, 77, 10, 1, time.Hour, now); !took {
			t.Error("after Forget(77), a cap of 1 refused its serve")
		}
		if got, _ := c.Reached(ctx, 78, now, nil); len(got) != 1 {
			t.Errorf("Reached(78), another user, after Forget(77) = %v; want its one cap", got)
		}
		c.Forget(ctx, 77)
		if n, err := c.Forget(ctx, 77); err != nil || n != 0 {
			t.Errorf("Forget(77) again = %d, %v; want 0, nil", n, err)
		}
	})
}

// SharedCounts are what the velocity contract checks (ivt.SharedCounts).
type SharedCounts interface {
	AddCounts(ctx context.Context, counts []ivt.Count) error
}

// Velocity checks shared velocity counts: adds of several instances to
// one key of one minute sum, in any batch; a key, a window and a minute
// are each counted apart; an empty batch is nothing.
func Velocity(t *testing.T, c SharedCounts) {
	ctx := context.Background()
	minute := int64(29_500_000) // a minute of 2026
	if err := c.AddCounts(ctx, nil); err != nil {
		t.Fatalf("AddCounts(nothing) = %v", err)
	}
	first := []ivt.Count{{Window: 'u', Minute: minute, Key: 7, Delta: 3}, {Window: 'a', Minute: minute, Key: 7, Delta: 5}}
	if err := c.AddCounts(ctx, first); err != nil {
		t.Fatal(err)
	}
	if first[0].Total != 3 || first[1].Total != 5 {
		t.Errorf("first totals = %d, %d; want 3, 5 (windows apart)", first[0].Total, first[1].Total)
	}
	var wg sync.WaitGroup
	for range 8 { // eight instances at once
		wg.Go(func() {
			if err := c.AddCounts(ctx, []ivt.Count{{Window: 'u', Minute: minute, Key: 7, Delta: 2}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	again := []ivt.Count{{Window: 'u', Minute: minute, Key: 7, Delta: 1}, {Window: 'u', Minute: minute, Key: 8, Delta: 1}, {Window: 'u', Minute: minute + 1, Key: 7, Delta: 1}}
	if err := c.AddCounts(ctx, again); err != nil {
		t.Fatal(err)
	}
	if got := []int64{again[0].Total, again[1].Total, again[2].Total}; !slices.Equal(got, []int64{20, 1, 1}) {
		t.Errorf("totals = %v; want [20 1 1]: 3 + 8×2 + 1 for the key, another key and the next minute apart", got)
	}
}
