package loadgen_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"marquee/loadgen"
)

// serve runs handler on a loopback port for the test's lifetime.
func serve(t *testing.T, handler fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fasthttp.Server{Handler: handler, CloseOnShutdown: true, Logger: quiet{}}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown() })
	return ln.Addr().String()
}

func requests(t *testing.T, addr string, paths ...string) [][]byte {
	t.Helper()
	r, err := loadgen.BuildRequests(addr, paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every counted response was served, the requests are cycled over all
// paths, and nothing is counted twice: the server sees at most one
// uncounted request per connection (the one in flight at the end).
func TestRunClosedLoopCountsWhatTheServerServed(t *testing.T) {
	var served [3]atomic.Int64
	addr := serve(t, func(ctx *fasthttp.RequestCtx) {
		served[ctx.Path()[1]-'a'].Add(1)
		ctx.SetBodyString("0123456789")
	})
	const conns = 4
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Addr: addr, Requests: requests(t, addr, "/a", "/b", "/c"), Conns: conns, Duration: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	total := served[0].Load() + served[1].Load() + served[2].Load()
	if res.OK == 0 || res.Responses != res.OK || res.Errors() != 0 {
		t.Fatalf("Run: responses %d, ok %d, errors %d; want all ok", res.Responses, res.OK, res.Errors())
	}
	if int64(res.OK) > total || int64(res.OK) < total-conns {
		t.Errorf("Run counted %d responses; the server served %d (want within %d)", res.OK, total, conns)
	}
	for i := range served {
		if share := float64(served[i].Load()) / float64(total); share < 0.3 || share > 0.37 {
			t.Errorf("path %d got %.3f of the requests; want 1/3", i, share)
		}
	}
	if res.BodyBytes != 10*res.Responses || res.AvgBody() != 10 {
		t.Errorf("BodyBytes = %d for %d responses; want 10 each", res.BodyBytes, res.Responses)
	}
	if res.Latency.Count() != int64(res.Responses) {
		t.Errorf("latency samples = %d; want one per response (%d)", res.Latency.Count(), res.Responses)
	}
	if len(res.Series) == 0 {
		t.Error("no throughput series")
	}
}

// Non-success statuses, dropped connections and timeouts are each counted,
// and the run goes on (reconnecting) after them.
func TestRunCountsErrors(t *testing.T) {
	addr := serve(t, func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/unavailable":
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		case "/drop":
			ctx.Conn().Close()
		case "/slow":
			time.Sleep(300 * time.Millisecond)
		}
	})
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Addr: addr, Requests: requests(t, addr, "/ok", "/unavailable", "/drop", "/slow"), Conns: 2,
		Duration: time.Second, Timeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK == 0 || res.Status[503] == 0 || res.Socket["read"] == 0 || res.Socket["timeout"] == 0 {
		t.Errorf("Run: ok %d, status %v, socket %v; want each kind counted", res.OK, res.Status, res.Socket)
	}
	if want := res.Status[503] + res.Socket["read"] + res.Socket["timeout"]; res.Errors() != want {
		t.Errorf("Errors() = %d; want %d", res.Errors(), want)
	}
}

func TestRunRefusedTarget(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err := loadgen.Run(context.Background(), loadgen.Config{Addr: addr, Requests: requests(t, addr, "/"), Conns: 1, Duration: time.Second})
	if err == nil {
		t.Error("Run against a closed port: no error")
	}
}

// The server answers nothing from 0.5 s to 1 s into a 2 s run. In open loop
// the ~500 requests due during the stall wait up to 0.5 s each, so a
// quarter of all requests are late and p99 is close to 0.5 s. A closed loop
// sends nothing while it waits, so its percentiles hide the stall (the
// coordinated omission the open loop exists to avoid).
func TestRunOpenLoopSeesStalls(t *testing.T) {
	var stallFrom, stallTo atomic.Int64
	addr := serve(t, func(ctx *fasthttp.RequestCtx) {
		if now := time.Now().UnixNano(); now >= stallFrom.Load() && now < stallTo.Load() {
			time.Sleep(time.Duration(stallTo.Load() - now))
		}
	})
	run := func(rate float64) *loadgen.Result {
		start := time.Now()
		stallFrom.Store(start.Add(500 * time.Millisecond).UnixNano())
		stallTo.Store(start.Add(time.Second).UnixNano())
		res, err := loadgen.Run(context.Background(), loadgen.Config{
			Addr: addr, Requests: requests(t, addr, "/"), Conns: 4, Duration: 2 * time.Second, Rate: rate,
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	open := run(1000)
	p := open.Latency.Percentiles()
	if p.P99 < 300*time.Millisecond || p.P90 < 150*time.Millisecond {
		t.Errorf("open loop at 1000/s through a 0.5 s stall: p90 %v, p99 %v; want ≥ 150ms and ≥ 300ms", p.P90, p.P99)
	}
	if open.OK < 1700 || open.OK > 2050 {
		t.Errorf("open loop at 1000/s for 2 s answered %d; want ~2000 (the late ones are sent, not skipped)", open.OK)
	}
	closed := run(0)
	if c := closed.Latency.Percentiles(); c.P99 >= p.P99/2 {
		t.Errorf("closed loop p99 %v vs open loop p99 %v; want the closed loop to hide the stall", c.P99, p.P99)
	}
}

func TestRunOpenLoopHoldsItsRate(t *testing.T) {
	addr := serve(t, func(ctx *fasthttp.RequestCtx) {})
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Addr: addr, Requests: requests(t, addr, "/"), Conns: 3, Duration: time.Second, Rate: 600,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK < 540 || res.OK > 606 {
		t.Errorf("open loop at 600/s for 1 s answered %d; want 540–606", res.OK)
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	release := make(chan struct{})
	addr := serve(t, func(ctx *fasthttp.RequestCtx) { <-release })
	t.Cleanup(func() { close(release) }) // before serve's Shutdown, which waits for handlers
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := loadgen.Run(ctx, loadgen.Config{
		Addr: addr, Requests: requests(t, addr, "/"), Conns: 2, Duration: time.Minute, Timeout: time.Minute,
	})
	if !errors.Is(err, context.Canceled) || res.Errors() != 0 {
		t.Errorf("Run cancelled mid-request = %v with %d errors; want context.Canceled and no errors", err, res.Errors())
	}
}

// quiet discards fasthttp's log of connections the tests drop on purpose.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// Offset moves where connections start: the first request of a run with
// one connection and Offset k is the k-th path.
func TestRunOffset(t *testing.T) {
	first := make(chan string, 10) // the first request of each connection
	addr := serve(t, func(ctx *fasthttp.RequestCtx) {
		if ctx.ConnRequestNum() == 1 {
			first <- string(ctx.Path())
		}
	})
	for k, want := range []string{"/a", "/b", "/c", "/a"} {
		_, err := loadgen.Run(context.Background(), loadgen.Config{
			Addr: addr, Requests: requests(t, addr, "/a", "/b", "/c"), Offset: k, Conns: 1, Duration: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := <-first; got != want {
			t.Errorf("Offset %d: first request %s; want %s", k, got, want)
		}
	}
}
