package collector

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"time"
)

// shard is one buffer of event lines with the goroutine that writes it to
// its own file.
type shard struct {
	c *Collector
	i int

	mu      sync.Mutex
	buf     []byte // lines not yet taken by the writer
	spare   []byte // the writer's last buffer, for reuse
	gen     uint64 // generation of buf: the writer takes it and moves on
	written uint64 // every generation up to this one is in the file
	failed  error  // the last write failed: refuse events until one succeeds
	closing bool
	events  uint64 // accepted, for metrics
	bytes   uint64
	cond    *sync.Cond // broadcast when written, failed or closing change

	kick   chan struct{}
	done   chan struct{} // closed by close
	exited chan struct{} // closed when run returns

	out      *file      // owned by run
	stranded []stranded // .part files a failed write or finish left, completed once writes succeed (owned by run)
	lost     int        // lines an exit left unwritten, after a failed write
}

// stranded is a .part file given up after a failed write or finish:
// its first good bytes hold every line written to it and nothing else.
type stranded struct {
	part string
	good int64
}

func newShard(c *Collector, i int) *shard {
	s := &shard{c: c, i: i, gen: 1, kick: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// append adds lines to the buffer and returns the generation they will be
// written in.
func (s *shard) append(lines []byte, events int) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return 0, ErrClosed
	case s.failed != nil:
		return 0, ErrFull
	case len(s.buf)+len(lines) > s.c.cfg.MaxPending:
		return 0, ErrFull
	}
	s.buf = append(s.buf, lines...)
	s.events += uint64(events)
	s.bytes += uint64(len(lines))
	return s.gen, nil
}

// wait returns once generation ticket is written, or the write failed.
func (s *shard) wait(ticket uint64) error {
	select {
	case s.kick <- struct{}{}:
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.written < ticket {
		if s.failed != nil {
			return ErrFull
		}
		s.cond.Wait()
	}
	return nil
}

// run writes the buffer every FlushEvery, or at once when kicked, until
// close; then it writes what is left and finishes the file.
func (s *shard) run() {
	defer close(s.exited)
	tick := time.NewTicker(s.c.cfg.FlushEvery)
	defer tick.Stop()
	var pending []byte // taken but not yet written (kept after a failed write)
	var pendingGen uint64
	for {
		closing := false
		select {
		case <-s.kick:
		case <-tick.C:
		case <-s.done:
			closing = true
		}
		s.mu.Lock()
		if len(s.buf) > 0 {
			if len(pending) == 0 {
				pending, s.buf, s.spare = s.buf, s.spare[:0], nil
			} else {
				// Lines accepted while a failed write was in flight join
				// its retry, or the last write before closing would leave
				// them out.
				pending = append(pending, s.buf...)
				s.buf = s.buf[:0]
			}
			pendingGen = s.gen
			s.gen++
		}
		s.mu.Unlock()
		err := s.write(pending, closing)
		s.mu.Lock()
		s.failed = err
		if err == nil {
			if len(pending) > 0 {
				s.written = pendingGen
				s.spare = pending[:0]
				s.c.wrote(len(pending))
			}
			pending = nil
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		s.c.m.spool.Set(float64(s.c.spool.Load()))
		if err != nil {
			s.c.log.Error("writing events failed; refusing events until a write succeeds", "shard", s.i, "err", err)
			s.c.m.writeErrors.Inc()
		}
		if err == nil && len(s.stranded) > 0 {
			s.complete()
		}
		if closing {
			if err != nil { // what was acknowledged and could not be written is lost with the process
				s.mu.Lock()
				s.lost = bytes.Count(pending, []byte("\n")) + bytes.Count(s.buf, []byte("\n"))
				s.mu.Unlock()
			}
			return // append refuses new lines once closing is set: nothing is left
		}
	}
}

// write writes lines to the current file (opening one if needed), makes
// them decodable, and rotates the file when it is big or old enough or the
// shard is closing.
func (s *shard) write(lines []byte, closing bool) error {
	now := time.Now()
	if len(lines) > 0 {
		if s.out == nil {
			f, err := newFile(s.c, s.c.fileName(s.c.nextSeq()), now, ".part")
			if err != nil {
				return err
			}
			s.out = f
		}
		good := s.out.written
		if err := s.out.write(lines); err != nil {
			s.abandon(good) // the lines are retried in a new file: cut from this one
			return err
		}
	}
	if s.out != nil && (closing || s.out.raw >= s.c.cfg.RotateBytes || now.Sub(s.out.opened) >= s.c.cfg.RotateAge) {
		good := s.out.written
		final, err := s.out.finish()
		if err != nil {
			// The lines are written (and told to the Tally): they stay
			// in the .part, completed once writes succeed again, and are
			// not written again.
			s.c.log.Error("finishing an event file failed; its events stay in it and are completed once the disk takes writes", "shard", s.i, "file", s.out.part, "err", err)
			s.c.m.writeErrors.Inc()
			s.abandon(good)
			return nil
		}
		s.out = nil
		if s.c.ship != nil {
			s.c.ship.enqueue(final)
		}
	}
	return nil
}

// abandon gives up the current file after a failed write or finish: its
// encoder's state is unknown, so what comes next goes to a new file. The
// .part is cut back to its first good bytes — every line written to it
// before, made decodable by their flush, and none of the failed write,
// which is retried elsewhere (cut here, it is never in two files) — and
// stays on disk, to be completed into a finished file once a write
// succeeds again (or at the next start).
func (s *shard) abandon(good int64) {
	s.out.f.Close()
	if err := os.Truncate(s.out.part, good); err != nil {
		// Completed from its good bytes all the same while this process
		// lives; a restart before that reads the whole file and may find
		// a line twice (a duplicate, never a loss).
		s.c.log.Error("cutting a failed write from its event file failed", "file", s.out.part, "err", err)
	}
	s.c.spool.Add(good - s.out.written)
	s.stranded = append(s.stranded, stranded{part: s.out.part, good: good})
	s.out = nil
}

// complete finishes the stranded .part files, now that the disk takes
// writes again; one that still fails stays for the next try.
func (s *shard) complete() {
	var left []stranded
	for _, p := range s.stranded {
		final, err := s.c.salvagePart(p.part, p.good)
		if err != nil {
			left = append(left, p)
			continue
		}
		s.c.spool.Add(-p.good) // the .part is gone; what it held is in final
		if final != "" && s.c.ship != nil {
			s.c.ship.enqueue(final)
		}
	}
	s.stranded = left
}

// close stops accepting into the shard and waits for the writer to write
// everything and finish its file. It returns the error of a final write
// that failed, with how many lines it leaves unwritten (lost with the
// process; in durable mode none of them was acknowledged).
func (s *shard) close() error {
	s.mu.Lock()
	s.closing = true
	s.cond.Broadcast()
	s.mu.Unlock()
	close(s.done)
	<-s.exited
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return fmt.Errorf("shard %d: %d events not written: %w", s.i, s.lost, s.failed)
	}
	return nil
}
