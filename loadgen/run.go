// Package loadgen is the engine behind `marquee bench`: an HTTP/1.1 load
// generator built to leave the CPU to the server it loads. Requests are
// pre-built byte strings written as they are, each connection is one
// goroutine with its own keep-alive socket, read buffer, response and
// histogram, and the steady state allocates nothing.
//
// Two modes: closed loop (each connection sends its next request as soon as
// the last is answered: maximum throughput) and open loop (a fixed arrival
// rate; latency is measured from the time a request was due to be sent, not
// from when it was sent, so a stalled server shows up in the percentiles
// instead of hiding behind the requests it prevented — no coordinated
// omission).
package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Config is one load run.
type Config struct {
	// Addr is the host:port to connect to.
	Addr string
	// Requests are sent in turn, each connection starting at a different
	// place in the list: connection i at Offset + i·len/Conns (mod len).
	// They are never modified.
	Requests [][]byte
	// Offset shifts where the connections start, so that successive runs
	// over one long trace (a cache benchmark) send different parts of it.
	Offset int
	// Conns is the number of concurrent keep-alive connections.
	Conns int
	// Duration is how long the run lasts.
	Duration time.Duration
	// Rate, when positive, is the open-loop arrival rate in requests per
	// second, spread evenly over the connections; zero means closed loop.
	Rate float64
	// Timeout bounds each request (connect, write, read); a request that
	// takes longer counts as a timeout error. Default 5 s.
	Timeout time.Duration
	// OK reports whether a status code is a success; default 200–299.
	OK func(status int) bool
	// Interval is the period of the throughput series and of Progress;
	// default 1 s.
	Interval time.Duration
	// Progress, if set, is called every Interval with the run so far, from
	// one goroutine.
	Progress func(Sample)
}

// Sample is the state of a run at one tick: totals so far and the rate over
// the last interval.
type Sample struct {
	Elapsed   time.Duration `json:"elapsedNs"`
	Responses uint64        `json:"responses"`
	Errors    uint64        `json:"errors"`
	ReqPerSec float64       `json:"reqPerSec"`
}

// Result is what a run measured. Only requests answered before the end of
// the run count; the few still in flight at the end are discarded.
type Result struct {
	Duration  time.Duration
	Responses uint64 // answered, any status
	OK        uint64 // answered with a success status
	BodyBytes uint64 // response bodies of the answered requests
	// Status counts the answered requests that were not a success, by code.
	Status map[int]uint64
	// Socket counts failures without a response, by kind: connect, write,
	// read, timeout.
	Socket  map[string]uint64
	Latency *Latency // of every answered request, any status
	Series  []Sample
}

// Errors is the number of requests that failed: a socket error or a status
// that is not a success.
func (r *Result) Errors() uint64 {
	var n uint64
	for _, c := range r.Status {
		n += c
	}
	for _, c := range r.Socket {
		n += c
	}
	return n
}

// ReqPerSec is successful responses per second.
func (r *Result) ReqPerSec() float64 { return float64(r.OK) / r.Duration.Seconds() }

// AvgBody is the mean response body size in bytes.
func (r *Result) AvgBody() float64 {
	if r.Responses == 0 {
		return 0
	}
	return float64(r.BodyBytes) / float64(r.Responses)
}

// Run loads cfg.Addr for cfg.Duration, or until ctx is done.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Conns < 1 || len(cfg.Requests) == 0 || cfg.Duration <= 0 || cfg.Offset < 0 {
		return nil, fmt.Errorf("loadgen: need at least one connection, one request, a positive duration and an offset ≥ 0")
	}
	if cfg.Rate < 0 {
		return nil, fmt.Errorf("loadgen: rate must be ≥ 0, got %v", cfg.Rate)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.OK == nil {
		cfg.OK = func(s int) bool { return s >= 200 && s < 300 }
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	// Check the target answers at all before starting the clock.
	c, err := net.DialTimeout("tcp", cfg.Addr, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	c.Close()

	start := time.Now()
	end := start.Add(cfg.Duration)
	// Workers stop at the end, also in the middle of a request: what is in
	// flight then is not counted, so there is nothing to wait for.
	stopWorkers, cancel := context.WithCancel(ctx)
	defer cancel()
	stopAtEnd := time.AfterFunc(cfg.Duration, cancel)
	defer stopAtEnd.Stop()
	workers := make([]*worker, cfg.Conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := newWorker(cfg, i, start, end)
		workers[i] = w
		wg.Go(func() { w.run(stopWorkers) })
	}
	series := sample(ctx, cfg, start, end, workers)
	wg.Wait()

	res := &Result{
		Duration: cfg.Duration,
		Status:   map[int]uint64{},
		Socket:   map[string]uint64{},
		Latency:  NewLatency(),
		Series:   series,
	}
	if now := time.Now(); now.Before(end) { // cut short by ctx
		res.Duration = now.Sub(start)
	}
	for _, w := range workers {
		res.Responses += w.responses.Load()
		res.OK += w.ok
		res.BodyBytes += w.bodyBytes
		for code, n := range w.status {
			res.Status[code] += n
		}
		for kind, n := range w.socket {
			if n > 0 {
				res.Socket[socketKinds[kind]] += n
			}
		}
		res.Latency.Merge(w.latency)
	}
	return res, ctx.Err()
}

// sample reads the workers' counters every interval until end, calling
// cfg.Progress, and returns the series.
func sample(ctx context.Context, cfg Config, start, end time.Time, workers []*worker) []Sample {
	var series []Sample
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	var last Sample
	for {
		var now time.Time
		select {
		case now = <-t.C:
		case <-ctx.Done():
			return series
		case <-time.After(time.Until(end)):
			now = time.Now()
		}
		s := Sample{Elapsed: min(now.Sub(start), end.Sub(start))}
		for _, w := range workers {
			s.Responses += w.responses.Load()
			s.Errors += w.errors.Load()
		}
		if dt := (s.Elapsed - last.Elapsed).Seconds(); dt > 0 {
			s.ReqPerSec = float64(s.Responses-last.Responses) / dt
			series = append(series, s)
			if cfg.Progress != nil {
				cfg.Progress(s)
			}
		}
		last = s
		if !now.Before(end) {
			return series
		}
	}
}

// Socket error kinds, in the order of worker.socket.
const (
	errConnect = iota
	errWrite
	errRead
	errTimeout
)

var socketKinds = [...]string{"connect", "write", "read", "timeout"}

// worker drives one connection. Its counters that the sampler reads are
// atomic; the rest belong to its goroutine until Run has waited for it.
type worker struct {
	responses atomic.Uint64
	errors    atomic.Uint64
	_         [48]byte // keep the next worker's counters off this cache line

	cfg      Config
	next     int           // index of the next request
	start    time.Time     // open loop: when request 0 of this connection is due
	interval time.Duration // open loop: between this connection's requests
	end      time.Time

	mu       sync.Mutex // guards conn against the ctx watcher; only the owner writes it
	conn     net.Conn
	br       *bufio.Reader
	deadline time.Time
	resp     fasthttp.Response

	ok        uint64
	bodyBytes uint64
	status    map[int]uint64
	socket    [len(socketKinds)]uint64
	latency   *Latency
}

func newWorker(cfg Config, i int, start, end time.Time) *worker {
	w := &worker{
		cfg:     cfg,
		next:    (cfg.Offset + i*len(cfg.Requests)/cfg.Conns) % len(cfg.Requests),
		start:   start,
		end:     end,
		status:  map[int]uint64{},
		latency: NewLatency(),
	}
	if cfg.Rate > 0 {
		w.interval = time.Duration(float64(time.Second) * float64(cfg.Conns) / cfg.Rate)
		// Stagger connections evenly over one interval.
		w.start = start.Add(w.interval * time.Duration(i) / time.Duration(cfg.Conns))
	}
	return w
}

func (w *worker) run(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		if c := w.currentConn(); c != nil {
			c.SetDeadline(time.Now()) // unblock a read in flight
		}
	})
	defer stop()
	defer w.close()
	var wait *time.Timer
	if w.interval > 0 {
		wait = time.NewTimer(time.Hour)
		defer wait.Stop()
	}
	due := w.start
	for seq := 0; ctx.Err() == nil; seq++ {
		if w.interval > 0 {
			due = w.start.Add(time.Duration(seq) * w.interval)
			if !due.Before(w.end) {
				return
			}
			if d := time.Until(due); d > 0 {
				wait.Reset(d)
				select {
				case <-wait.C:
				case <-ctx.Done():
					return
				}
			}
		}
		sent := time.Now()
		if !sent.Before(w.end) {
			return
		}
		if w.interval == 0 {
			due = sent
		}
		status, kind := w.do(sent)
		done := time.Now()
		if done.After(w.end) || ctx.Err() != nil {
			return // in flight at the end: not counted
		}
		if kind >= 0 {
			w.socket[kind]++
			w.errors.Add(1)
			if kind == errConnect {
				time.Sleep(10 * time.Millisecond) // do not spin on a refused port
			}
			continue
		}
		w.latency.Record(done.Sub(due))
		w.bodyBytes += uint64(len(w.resp.Body()))
		if w.cfg.OK(status) {
			w.ok++
		} else {
			w.status[status]++
			w.errors.Add(1)
		}
		w.responses.Add(1)
	}
}

func (w *worker) currentConn() net.Conn {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.conn
}

func (w *worker) setConn(c net.Conn) {
	w.mu.Lock()
	w.conn = c
	w.mu.Unlock()
}

func (w *worker) close() {
	if c := w.currentConn(); c != nil {
		c.Close()
		w.setConn(nil)
	}
}

// do sends the next request and reads its response, (re)connecting first if
// needed. It returns the status, and the socket error kind or -1.
func (w *worker) do(now time.Time) (status, kind int) {
	if w.conn == nil {
		c, err := net.DialTimeout("tcp", w.cfg.Addr, w.cfg.Timeout)
		if err != nil {
			return 0, errConnect
		}
		w.setConn(c)
		if w.br == nil {
			w.br = bufio.NewReaderSize(c, 64<<10)
		} else {
			w.br.Reset(c)
		}
		w.deadline = time.Time{}
	}
	// Moving a deadline costs a timer update, so it is moved only once it is
	// less than half a timeout away: every request gets between Timeout/2
	// and Timeout.
	if w.deadline.Sub(now) < w.cfg.Timeout/2 {
		w.deadline = now.Add(w.cfg.Timeout)
		w.conn.SetDeadline(w.deadline)
	}
	req := w.cfg.Requests[w.next]
	if w.next++; w.next == len(w.cfg.Requests) {
		w.next = 0
	}
	if _, err := w.conn.Write(req); err != nil {
		w.close()
		return 0, errKind(err, errWrite)
	}
	w.resp.Reset()
	if err := w.resp.Read(w.br); err != nil {
		w.close()
		return 0, errKind(err, errRead)
	}
	if w.resp.ConnectionClose() {
		w.close()
	}
	return w.resp.StatusCode(), -1
}

func errKind(err error, otherwise int) int {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, fasthttp.ErrTimeout) {
		return errTimeout
	}
	return otherwise
}
