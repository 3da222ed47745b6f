package collector

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Shipper stores a finished file under key (its path in the spool, with
// "/" separators: dt=…/hour=…/<name>) and returns only once it is stored.
type Shipper interface {
	Ship(ctx context.Context, key, path string) error
}

// shipper ships finished files one at a time, in the order they were
// finished, retrying each with backoff (100 ms doubling to 30 s) until it
// is stored; then it deletes the local file.
type shipper struct {
	c        *Collector
	to       Shipper
	mu       sync.Mutex
	q        []string
	wake     chan struct{}
	stop     context.CancelFunc // ends run's context: drain gives up
	idle     chan struct{}      // closed by drain: return when the queue is empty
	finished chan struct{}      // closed when run returns
}

// newShipper returns a shipper and the context its run takes, which
// drain cancels when it gives up.
func newShipper(c *Collector, to Shipper) (*shipper, context.Context) {
	ctx, stop := context.WithCancel(context.Background())
	return &shipper{c: c, to: to, wake: make(chan struct{}, 1), stop: stop,
		idle: make(chan struct{}), finished: make(chan struct{})}, ctx
}

func (s *shipper) enqueue(path string) {
	s.mu.Lock()
	s.q = append(s.q, path)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *shipper) next() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.q) == 0 {
		return "", false
	}
	p := s.q[0]
	s.q = s.q[1:]
	return p, true
}

// run ships queued files until drain has emptied the queue or ctx ends.
func (s *shipper) run(ctx context.Context) {
	defer close(s.finished)
	for {
		p, ok := s.next()
		if !ok {
			select {
			case <-s.wake:
				continue
			case <-s.idle:
				return
			case <-ctx.Done():
				return
			}
		}
		if !s.ship(ctx, p) {
			return // stopped: p stays on disk for the next start
		}
	}
}

// ship stores one file, retrying until it succeeds or the shipper stops.
func (s *shipper) ship(ctx context.Context, path string) bool {
	rel, err := filepath.Rel(s.c.cfg.Dir, path)
	if err != nil {
		return true
	}
	key := filepath.ToSlash(rel)
	fi, err := os.Stat(path)
	if err != nil {
		return true // gone (shipped by an earlier run that died before deleting)
	}
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		start := time.Now()
		var err error
		if t := s.c.cfg.Tally; t != nil {
			err = t.Flush(tctx) // the file is counted before it leaves the disk
		}
		for _, f := range s.c.cfg.Forwarders {
			if err == nil {
				err = f.Flush(tctx) // and in every stream
			}
		}
		if err == nil {
			err = s.to.Ship(tctx, key, path)
		}
		cancel()
		if err == nil {
			s.c.m.uploadSeconds.Observe(time.Since(start).Seconds())
			s.c.m.uploads.WithLabelValues("ok").Inc()
			if err := os.Remove(path); err != nil {
				s.c.log.Warn("shipped file not deleted", "path", path, "err", err)
			}
			s.c.spool.Add(-fi.Size())
			s.c.m.spool.Set(float64(s.c.spool.Load()))
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		s.c.m.uploads.WithLabelValues("failed").Inc()
		if attempt == 0 {
			s.c.log.Warn("shipping events failed; retrying with backoff", "key", key, "err", err)
		}
		select {
		case <-time.After(backoff):
			s.c.m.retries.Inc()
		case <-ctx.Done():
			return false
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// drain lets the shipper empty its queue until ctx is done, then stops it;
// what is left stays on disk for the next start.
func (s *shipper) drain(ctx context.Context) {
	close(s.idle)
	select {
	case <-s.finished:
	case <-ctx.Done():
		s.stop()
		<-s.finished
	}
	s.stop()
}
