package loadgen

import (
	"net"
	"testing"
	"time"
)

// A request-response round trip allocates nothing on the generator's side
// once the connection is up. The server runs in this process, so the count
// includes its allocations too: the hello-world has none in steady state.
func TestWorkerRoundTripAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := HelloServer(Hello{Body: HelloBody(2000)})
	go s.Serve(ln)
	defer s.Shutdown()
	reqs, _ := BuildRequests(ln.Addr().String(), []string{"/a", "/b"}, nil)
	w := newWorker(Config{Addr: ln.Addr().String(), Requests: reqs, Conns: 1, Timeout: time.Second,
		OK: func(int) bool { return true }}, 0, time.Now(), time.Now().Add(time.Hour))
	defer w.close()
	allocs := testing.AllocsPerRun(2000, func() {
		if status, kind := w.do(time.Now()); status != 200 || kind >= 0 {
			t.Fatalf("do() = %d, %d; want 200, -1", status, kind)
		}
	})
	if allocs != 0 {
		t.Errorf("allocations per round trip = %v; want 0", allocs)
	}
}
