// Package attribution decides what earned a conversion
// (docs/api.md#conversions): the click its click id names, within the
// campaign's post-click window; failing that, the user's last viewable
// impression (else impression) of the advertiser's ads within the
// post-view window. It keeps what each user's impressions left for that
// (touches) in a Store shared by every instance, written in batches so
// that an impression pays no round trip.
package attribution

import (
	"context"
	"sync"
	"time"

	"marquee"
	"marquee/counters"
)

// Store keeps the touches (counters.MemoryMoney for one instance,
// counters.Redis for many).
type Store interface {
	PutTouches(ctx context.Context, ts []counters.Touch) error
	Touches(ctx context.Context, user uint64, advertiser int64) (imp, view counters.Seen, err error)
}

// MaxPending bounds the touches a Recorder holds while its Store does
// not answer: past it the oldest are dropped (post-view attribution is
// best effort: a lost touch loses one post-view attribution, and never
// counts one twice).
const MaxPending = 100_000

// Recorder batches touches into a Store. Safe for concurrent use.
type Recorder struct {
	st      Store
	mu      sync.Mutex
	pending []counters.Touch
	dropped int64
}

// NewRecorder returns a recorder writing to st.
func NewRecorder(st Store) *Recorder { return &Recorder{st: st} }

// Touch keeps t for the next Flush.
func (r *Recorder) Touch(t counters.Touch) {
	r.mu.Lock()
	if len(r.pending) >= MaxPending {
		r.pending = r.pending[1:]
		r.dropped++
	}
	r.pending = append(r.pending, t)
	r.mu.Unlock()
}

// Flush writes the pending touches; on an error they are kept for the
// next (within MaxPending).
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	ts := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(ts) == 0 {
		return nil
	}
	if err := r.st.PutTouches(ctx, ts); err != nil {
		r.mu.Lock()
		r.pending = append(ts, r.pending...)
		if over := len(r.pending) - MaxPending; over > 0 {
			r.pending, r.dropped = r.pending[over:], r.dropped+int64(over)
		}
		r.mu.Unlock()
		return err
	}
	return nil
}

// Run flushes every interval until ctx ends, then once more.
func (r *Recorder) Run(ctx context.Context, every time.Duration, errs func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			r.Flush(fctx)
			cancel()
			return
		case <-t.C:
			fctx, cancel := context.WithTimeout(ctx, 5*every)
			err := r.Flush(fctx)
			cancel()
			if errs != nil {
				errs(err)
			}
		}
	}
}

// Last is user's last impression and last viewable impression of
// advertiser's ads: the store's, or this instance's not yet flushed.
func (r *Recorder) Last(ctx context.Context, user uint64, advertiser int64) (imp, view counters.Seen, err error) {
	if imp, view, err = r.st.Touches(ctx, user, advertiser); err != nil {
		return imp, view, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.pending {
		t := &r.pending[i]
		if t.User != user || t.Advertiser != advertiser {
			continue
		}
		s := counters.Seen{At: t.At, Verified: t.Verified, Token: t.Token}
		switch {
		case t.Kind == 'v' && t.At >= view.At:
			view = s
		case t.Kind == 'i' && t.At >= imp.At:
			imp = s
		}
	}
	return imp, view, nil
}

// Touchpoint is what a conversion may be attributed to: a click or an
// impression, when, and the window of its campaign.
type Touchpoint struct {
	At     time.Time
	Window marquee.Window
}

// within says t may earn a conversion at now: it is at most its window
// before now (and not after now, but for a minute of clocks apart).
func (t *Touchpoint) within(now time.Time) bool {
	return !t.At.IsZero() && !t.At.After(now.Add(time.Minute)) && now.Sub(t.At) <= time.Duration(t.Window)
}

// Choose says what a conversion at now goes to: the click (post-click)
// when it is within its window; else the viewable impression, else the
// impression, within theirs (post-view); else nothing (""). A nil
// touchpoint is none.
func Choose(click, view, imp *Touchpoint, now time.Time) string {
	switch {
	case click != nil && click.within(now):
		return marquee.AttributedClick
	case view != nil && view.within(now):
		return "view"
	case imp != nil && imp.within(now):
		return "impression"
	}
	return ""
}
