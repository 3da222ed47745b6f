package delivery

import (
	"context"
	"time"

	"marquee/counters"
)

// Counters keep when each user was served each campaign, for frequency
// caps (package counters: in memory, or in Redis for many instances). A
// decision takes the serves of the capped campaigns it chose in one call
// (Take, each refused when the user reached the cap), so a capped
// campaign is never chosen more than its cap, whether or not its
// impressions fire; Explain reads the caps a user reached (Reached).
type Counters interface {
	// Reached appends the caps user has reached at now to into, sorted
	// by campaign.
	Reached(ctx context.Context, user uint64, now time.Time, into []counters.Reached) ([]counters.Reached, error)
	// Take takes the serves of takes, atomically: took[i] is the user's
	// serves of takes[i]'s campaign within its window once taken, 0 when
	// refused; after a refusal, the user's reached caps are appended to
	// reached.
	Take(ctx context.Context, user uint64, now time.Time, takes []counters.Take, took []int, reached []counters.Reached) ([]counters.Reached, error)
}

// window is the span of a cap window: "flight" is the campaign's flight.
func window(w string, c *Campaign) time.Duration {
	switch w {
	case "1h":
		return time.Hour
	case "24h":
		return 24 * time.Hour
	case "7d":
		return 7 * 24 * time.Hour
	}
	return c.EndAt.Sub(c.StartAt)
}
