package loadgen

import (
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// SlowClients are the trickling clients of `marquee bench -slow-clients
// N`: N connections to the target that each send a request line and then
// one header byte every -slow-every, never finishing the request, as a
// slowloris attack does. A connection the server cuts (its read timeout)
// is counted and opened again. On a loopback target the clients spread
// over source addresses 127.0.0.2, 127.0.0.3, … (perIP each), so that a
// per-IP connection limit does not refuse them all: they stand for many
// slow clients, not one.
type SlowClients struct {
	addr  string // host:port
	n     int
	perIP int
	every time.Duration

	// Open, Cut and Failed count the connections open now, the ones the
	// server cut (each opened again), and the dials that failed.
	Open, Cut, Failed atomic.Int64
}

// NewSlowClients returns n slow clients of target (a URL), perIP a
// source address, each sending a byte every every.
func NewSlowClients(target string, n, perIP int, every time.Duration) (*SlowClients, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	return &SlowClients{addr: u.Host, n: n, perIP: perIP, every: every}, nil
}

// run holds the clients until ctx ends, then closes them.
// Run keeps the clients open until ctx ends.
func (s *SlowClients) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range s.n {
		wg.Go(func() { s.one(ctx, i) })
	}
	wg.Wait()
}

// one keeps client i trickling until ctx ends.
func (s *SlowClients) one(ctx context.Context, i int) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if host, _, _ := net.SplitHostPort(s.addr); net.ParseIP(host).IsLoopback() {
		d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, byte(i/s.perIP/250), byte(2+i/s.perIP%250))}
	}
	// Start spread over one period, so the trickle is even.
	if !sleepCtx(ctx, time.Duration(i)*s.every/time.Duration(s.n)) {
		return
	}
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", s.addr)
		if err != nil {
			if ctx.Err() == nil {
				s.Failed.Add(1)
				sleepCtx(ctx, s.every)
			}
			continue
		}
		s.Open.Add(1)
		stop := context.AfterFunc(ctx, func() { c.Close() })
		_, err = c.Write([]byte("GET /api/v1/ad HTTP/1.1\r\nHost: slow\r\nX-Slow: "))
		for err == nil && sleepCtx(ctx, s.every) {
			_, err = c.Write([]byte("a"))
		}
		stop()
		c.Close()
		s.Open.Add(-1)
		if ctx.Err() == nil {
			s.Cut.Add(1)
		}
	}
}

// sleepCtx sleeps for d, reporting false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
