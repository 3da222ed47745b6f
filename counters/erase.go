package counters

import (
	"context"
	"log/slog"
	"time"

	"marquee"
)

// Forgetter forgets a user's serves.
type Forgetter interface {
	Forget(ctx context.Context, user uint64) (int, error)
}

// Eraser is the marquee.Applier that makes c forget the data subjects a
// batch of the changelog erases, on every instance. A failure is logged,
// not retried: the serves end with their caps' windows.
func Eraser(c Forgetter, log *slog.Logger) marquee.Applier {
	return marquee.ApplyFunc(func(ctx context.Context, b *marquee.Batch) error {
		if len(b.Subjects) == 0 {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		for _, p := range b.Subjects {
			if _, err := c.Forget(ctx, p); err != nil {
				log.Error("an erased subject's frequency-cap serves were not forgotten", "err", err)
			}
		}
		return nil
	})
}
