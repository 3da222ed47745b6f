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
)

// Counters are what the contract checks (delivery.Counters).
type Counters interface {
	Seen(ctx context.Context, user uint64, into []counters.Serve) ([]counters.Serve, error)
	Take(ctx context.Context, user uint64, now time.Time, takes []counters.Take, took []int, seen []counters.Serve) ([]counters.Serve, error)
	Forget(ctx context.Context, user uint64) (int, error)
}

// take1 takes one serve.
func take1(c Counters, ctx context.Context, user uint64, campaign int64, count int, within time.Duration, now time.Time) (bool, error) {
	var took [1]int
	_, err := c.Take(ctx, user, now, []counters.Take{{Campaign: campaign, Count: count, Within: within}}, took[:], nil)
	return took[0] > 0, err
}

// Run checks the contract; open returns a fresh counter for "instance" i,
// all of one test sharing their state (one Redis), or the same one.
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
		if took, _ := take1(c, ctx, 7, 3, 3, time.Hour, now.Add(61*time.Minute)); !took {
			t.Error("an hour after the first serve, the window has room again: refused")
		}
		if took, _ := take1(c, ctx, 8, 3, 3, time.Hour, now); !took {
			t.Error("another user was refused")
		}
		if took, _ := take1(c, ctx, 7, 4, 3, time.Hour, now); !took {
			t.Error("another campaign was refused")
		}
		seen, err := c.Seen(ctx, 7, nil)
		if err != nil || counters.Within(seen, 3, 24*time.Hour, now.Add(time.Hour)) != 4 || counters.Within(seen, 4, 24*time.Hour, now) != 1 || len(seen) != 5 {
			t.Errorf("Seen(7) = %v, %v; want 4 serves of campaign 3, 1 of 4", seen, err)
		}
		if first := seen[slices.IndexFunc(seen, func(s counters.Serve) bool { return s.Campaign == 3 })]; first.At != now.UnixNano() {
			t.Errorf("the first serve of campaign 3 = %v; want at %v (oldest first)", first, now.UnixNano())
		}
		if n := counters.Within(seen, 3, time.Hour, now.Add(61*time.Minute)); n != 2 {
			t.Errorf("within the hour before +61m: %d; want 2 (the serves at +2m and +61m)", n)
		}
		prefix := []counters.Serve{{Campaign: 99, At: 1}}
		if got, _ := c.Seen(ctx, 7, prefix); len(got) != 6 || got[0] != prefix[0] {
			t.Errorf("Seen(7, one serve) = %v; want that serve and 5 more appended", got)
		}
		if seen, err := c.Seen(ctx, 999, nil); err != nil || len(seen) != 0 {
			t.Errorf("Seen of a new user = %v, %v", seen, err)
		}
	})
	t.Run("Batch", func(t *testing.T) {
		c := open(t, 0)
		take1(c, ctx, 5, 2, 1, time.Hour, now) // campaign 2 is at its cap of 1
		takes := []counters.Take{{Campaign: 1, Count: 2, Within: time.Hour}, {Campaign: 2, Count: 1, Within: time.Hour}, {Campaign: 3, Count: 1, Within: 24 * time.Hour}}
		took := make([]int, 3)
		prefix := []counters.Serve{{Campaign: 99, At: 1}}
		seen, err := c.Take(ctx, 5, now, takes, took, prefix)
		if err != nil || !slices.Equal(took, []int{1, 0, 1}) {
			t.Fatalf("a batch of three, the second capped = %v, %v; want [1 0 1] (serves within the window once taken; 0: refused)", took, err)
		}
		if len(seen) != 4 || seen[0] != prefix[0] || counters.Within(seen, 2, time.Hour, now) != 1 || counters.Within(seen, 1, time.Hour, now) != 1 {
			t.Errorf("after a refusal, the user's serves appended = %v; want the prefix, then campaigns 1, 2 and 3 once each", seen)
		}
		seen, err = c.Take(ctx, 5, now, takes[:1], took[:1], nil)
		if err != nil || took[0] != 2 || seen != nil {
			t.Fatalf("campaign 1 again = %v, %v, %v; want its second serve (2), no serves appended without a refusal", took[0], seen, err)
		}
		if seen, _ := c.Seen(ctx, 5, nil); len(seen) != 4 {
			t.Errorf("after the batches: %v; want 4 serves (campaign 1 twice, 2 and 3 once)", seen)
		}
	})
	t.Run("Keep", func(t *testing.T) {
		c := open(t, 0)
		for i := range counters.Keep + 10 {
			take1(c, ctx, 1, 1, 1_000_000, time.Hour, now.Add(time.Duration(i)*time.Second))
		}
		if seen, _ := c.Seen(ctx, 1, nil); len(seen) != counters.Keep || seen[0].At != now.Add(10*time.Second).UnixNano() {
			t.Errorf("kept %d serves from %v; want the last %d", len(seen), seen[:1], counters.Keep)
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
		take1(c, ctx, 78, 10, 5, time.Hour, now)
		n, err := c.Forget(ctx, 77)
		if err != nil || n != 3 {
			t.Errorf("Forget(77) = %d, %v; want its 3 serves forgotten", n, err)
		}
		if seen, _ := c.Seen(ctx, 77, nil); len(seen) != 0 {
			t.Errorf("Seen(77) after Forget = %v; want none", seen)
		}
		if seen, _ := c.Seen(ctx, 78, nil); len(seen) != 1 {
			t.Errorf("Seen(78), another user, after Forget(77) = %v; want its one serve", seen)
		}
		if n, err := c.Forget(ctx, 77); err != nil || n != 0 {
			t.Errorf("Forget(77) again = %d, %v; want 0, nil", n, err)
		}
	})
}
