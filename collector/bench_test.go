package collector_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"marquee/collector"
)

// line is an event line as the beacon route writes it (~260 bytes).
var line = []byte(`{"receivedAt":"2026-11-23T12:00:00.123456789Z","id":"d4f1c2b3a4e5f6a7b8c9","ip":"203.0.113.7",` +
	`"ua":"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15","type":"impression",` +
	`"ad":"12345","campaign":"summer-sale","country":"TW","platform":"ios"}` + "\n")

// benchCollector is a collector on a temporary dir, closed when the test
// ends, whose writers run every flushEvery.
func benchCollector(tb testing.TB, flushEvery time.Duration) *collector.Collector {
	c := newCollector(tb, collector.Config{Dir: tb.TempDir(), MaxPending: 256 << 20, FlushEvery: flushEvery})
	tb.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// BenchmarkAppend measures Append of one event line from many goroutines
// (keys spread over the shards as connection ids are), with the shards'
// writers compressing and writing to files meanwhile: what an accepted
// event costs the request that sent it.
//
//	go test ./collector -run XXX -bench Append
func BenchmarkAppend(b *testing.B) {
	c := benchCollector(b, 5*time.Millisecond)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	var conns atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		key := conns.Add(1)
		for pb.Next() {
			if err := c.Append(key, line, 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// An accepted event allocates nothing on the request's side: Append copies
// the line into the shard's buffer. The writers are held off (a flush
// interval of an hour) so that their work is not counted, and the buffer
// is grown first.
func TestAppendAllocatesNothing(t *testing.T) {
	c := benchCollector(t, time.Hour)
	for range 1000 {
		c.Append(1, line, 1)
	}
	if n := testing.AllocsPerRun(1000, func() {
		if err := c.Append(1, line, 1); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Append allocates %v times an event; want 0", n)
	}
}
