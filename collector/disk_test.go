package collector_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"
	"github.com/prometheus/client_golang/prometheus"

	"marquee"
	"marquee/collector"
	"marquee/tmpfs"
)

// TestRefusedBelowTheWatermark: with an injected free-space probe, events
// are refused (503) while free space is below MinFree, and accepted again
// when it returns; what was accepted is written.
func TestRefusedBelowTheWatermark(t *testing.T) {
	var free atomic.Uint64
	free.Store(10 << 20)
	dir := t.TempDir()
	c := newCollector(t, collector.Config{Dir: dir, MinFree: 1 << 20, ProbeEvery: 5 * time.Millisecond,
		FreeSpace: func(string) (uint64, uint64, error) { return free.Load(), 100 << 20, nil }})
	if err := c.Append(1, []byte("{\"n\":1}\n"), 1); err != nil {
		t.Fatal(err)
	}
	free.Store(512 << 10)
	eventually(t, func() bool { return c.DiskLow() })
	err := c.Append(1, []byte("{\"n\":2}\n"), 1)
	if !errors.Is(err, collector.ErrDiskFull) || marquee.KindOf(err) != marquee.KindUnavailable {
		t.Fatalf("Append below the watermark = %v; want ErrDiskFull (503)", err)
	}
	free.Store(2 << 20)
	eventually(t, func() bool { return !c.DiskLow() })
	if err := c.Append(1, []byte("{\"n\":3}\n"), 1); err != nil {
		t.Fatalf("Append after space returned = %v", err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, dir); !slices.Equal(got, []string{`{"n":1}`, `{"n":3}`}) {
		t.Fatalf("files hold %v; want the two accepted events", got)
	}
	// The default watermark: 1 GiB or 5% of the filesystem.
	if got := collector.DefaultMinFree(100 << 30); got != 1<<30 {
		t.Errorf("DefaultMinFree(100 GiB) = %d; want 1 GiB", got)
	}
	if got := collector.DefaultMinFree(4 << 20); got != 4<<20/20 {
		t.Errorf("DefaultMinFree(4 MiB) = %d; want 5%%", got)
	}
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for range 400 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("condition never held")
}

// TestFullDiskKeepsAcknowledgedEvents, on a real tmpfs: with the
// watermark off, the disk fills under acknowledged events; their writes
// fail and are retried, new events are refused meanwhile, and once space
// returns every acknowledged event is in the files exactly once (a
// failed write is cut from its file before it is retried in another,
// and a file that failed to rotate keeps its lines). In durable mode an
// event is acknowledged only once written, so none can be lost.
func TestFullDiskKeepsAcknowledgedEvents(t *testing.T) {
	for _, codec := range []string{"none", "lz4", "zstd"} {
		for _, durable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/durable=%v", codec, durable), func(t *testing.T) { fullDisk(t, codec, durable) })
		}
	}
}

func fullDisk(t *testing.T, codec string, durable bool) {
	mnt := tmpfs.Mount(t, 4<<20)
	spool := filepath.Join(mnt, "events")
	c := newCollector(t, collector.Config{Dir: spool, MinFree: -1, FlushEvery: 5 * time.Millisecond, Codec: codec, Shards: 1, Durable: durable,
		RotateBytes: 64 << 10})
	// Leave room for some events, so that the disk fills in the middle
	// of writes (of lines and of rotations), as it does in production.
	filler := tmpfs.Fill(t, mnt)
	fi, _ := os.Stat(filler)
	os.Truncate(filler, fi.Size()-160<<10)
	var acked []string
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 8000 {
		// A random pad: no codec shrinks the events out of the full disk.
		line := fmt.Sprintf(`{"n":%d,"pad":"%016x%016x%016x%016x"}`, i, rnd.Uint64(), rnd.Uint64(), rnd.Uint64(), rnd.Uint64())
		if err := c.Append(1, []byte(line+"\n"), 1); err == nil {
			acked = append(acked, line)
		}
		if i%50 == 0 {
			time.Sleep(5 * time.Millisecond) // let the writer try (and fail)
		}
	}
	if len(acked) == 8000 {
		t.Fatal("every event was accepted on a full disk: the writes never failed")
	}
	os.Remove(filler)
	eventually(t, func() bool { return c.Append(1, []byte("{\"after\":1}\n"), 1) == nil })
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range readAll(t, spool) {
		seen[line]++
	}
	for _, line := range append(acked, `{"after":1}`) {
		if seen[line] != 1 {
			t.Errorf("acknowledged event %s is %d times in the files after space returned; want once", line, seen[line])
		}
	}
	// A refused event may have been written (its client retries: a
	// duplicate it caused), but once at most.
	for line, n := range seen {
		if n > 1 {
			t.Errorf("the files hold %s %d times; want once at most", line, n)
		}
	}
	if t.Failed() {
		t.Logf("%d acknowledged", len(acked))
	}
}

// TestWatermarkOnARealDisk: on a real 4 MiB tmpfs with the default
// watermark (5% of it), events are refused before the disk is full.
func TestWatermarkOnARealDisk(t *testing.T) {
	mnt := tmpfs.Mount(t, 4<<20)
	spool := filepath.Join(mnt, "events")
	c := newCollector(t, collector.Config{Dir: spool, ProbeEvery: 5 * time.Millisecond, Codec: "none"})
	defer c.Close(context.Background())
	filler := tmpfs.Fill(t, mnt)
	fi, _ := os.Stat(filler)
	os.Truncate(filler, fi.Size()-1<<20) // ~1 MiB free: above 5% (200 KiB)
	time.Sleep(20 * time.Millisecond)
	if err := c.Append(1, []byte("{}\n"), 1); err != nil {
		t.Fatalf("Append with 1 MiB free = %v", err)
	}
	os.Remove(filler)
	filler = tmpfs.Fill(t, mnt)
	fi, _ = os.Stat(filler)
	os.Truncate(filler, fi.Size()-100<<10) // ~100 KiB free: below 5%
	eventually(t, func() bool { return errors.Is(c.Append(1, []byte("{}\n"), 1), collector.ErrDiskFull) })
}

// TestSalvageSaysWhatItDropped: .part files an interruption left are
// completed at start, each with a warning naming the file and what was
// kept and dropped; the damaged ones (a tail cut in a block, bytes of
// no codec, a cut last line) are counted with the bytes they lost.
func TestSalvageSaysWhatItDropped(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	os.MkdirAll(tmp, 0o755)
	var lines bytes.Buffer
	for i := range 2000 {
		fmt.Fprintf(&lines, `{"i":%d,"pad":"%d"}`+"\n", i, i*7919)
	}
	frame := func(cut bool) []byte { // two flushed blocks, no end mark; cut: the second block cut in half
		var b bytes.Buffer
		w := lz4.NewWriter(&b)
		w.Write(lines.Bytes()[:lines.Len()/2])
		w.Flush()
		first := b.Len()
		w.Write(lines.Bytes()[lines.Len()/2:])
		w.Flush()
		if cut {
			return b.Bytes()[:first+(b.Len()-first)/2]
		}
		return b.Bytes()
	}
	random := make([]byte, 5000)
	rand.NewChaCha8([32]byte{1}).Read(random)
	parts := map[string][]byte{
		"test-1.ndjson.lz4.part": frame(false),                           // a crash after a flush: whole
		"test-2.ndjson.lz4.part": frame(true),                            // damaged: a block cut
		"test-3.ndjson.lz4.part": nil,                                    // empty
		"test-4.ndjson.lz4.part": random,                                 // damaged: not lz4
		"test-5.ndjson.part":     []byte("{\"a\":1}\n{\"a\":2}\n{\"a\""), // damaged: a cut line
	}
	for name, b := range parts {
		os.WriteFile(filepath.Join(tmp, name), b, 0o644)
	}
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	c, err := collector.New(collector.Config{Dir: dir, Instance: "test"}, slog.New(slog.NewTextHandler(&logs, nil)), reg)
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
	for name := range parts {
		if !strings.Contains(logs.String(), name) {
			t.Errorf("no warning names %s:\n%s", name, logs.String())
		}
	}
	for _, want := range []string{"level=WARN", "undecodable_bytes=5000", "partial_line_bytes=4", "lines_dropped=1", "empty event file removed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the warnings lack %q:\n%s", want, logs.String())
		}
	}
	metric := func(name string) float64 {
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			if mf.GetName() == name {
				return mf.Metric[0].GetCounter().GetValue()
			}
		}
		t.Fatalf("no metric %s", name)
		return 0
	}
	if got := metric("marquee_events_salvaged_files_total"); got != 5 {
		t.Errorf("salvaged files = %v; want 5", got)
	}
	if got := metric("marquee_events_salvage_damaged_files_total"); got != 3 {
		t.Errorf("damaged files = %v; want 3 (the cut block, the random bytes, the cut line)", got)
	}
	if got := metric("marquee_events_salvage_dropped_bytes_total"); got < 5000+4 {
		t.Errorf("dropped bytes = %v; want at least the 5,000 random and the 4 of the cut line", got)
	}
	// Every whole line of the whole file is kept; of the cut one, the
	// first block's; of the cut line's file, the two whole lines.
	got := map[string]int{}
	for _, l := range readAll(t, dir) {
		got[l]++
	}
	for _, l := range strings.Split(strings.TrimSpace(lines.String()), "\n") {
		if got[l] < 1 {
			t.Fatalf("line %s of the whole file is missing", l)
		}
	}
	if got[`{"a":1}`] != 1 || got[`{"a":2}`] != 1 {
		t.Errorf("the cut line's file kept %d and %d of its two whole lines; want each once (files %q)", got[`{"a":1}`], got[`{"a":2}`], files(t, dir))
	}
}

// TestFullDiskStopLosesNothingAcknowledged, on a real 4 MiB tmpfs with
// the default watermark and the default probe (every 250 ms): a burst of
// events faster than the probe fills the disk, and the collector stops
// at once, the disk still full. Every acknowledged event is in the files:
// what is acknowledged but unwritten is counted against the free space,
// so the disk always has room for it. (Without that, a burst between two
// probes was acknowledged into buffers the disk could not take, and lost
// at the stop.)
func TestFullDiskStopLosesNothingAcknowledged(t *testing.T) {
	for _, codec := range []string{"none", "lz4"} {
		t.Run(codec, func(t *testing.T) {
			mnt := tmpfs.Mount(t, 4<<20)
			spool := filepath.Join(mnt, "events")
			c := newCollector(t, collector.Config{Dir: spool, Codec: codec, RotateBytes: 256 << 10})
			filler := tmpfs.Fill(t, mnt)
			fi, _ := os.Stat(filler)
			os.Truncate(filler, fi.Size()-800<<10) // ~800 KiB free, the watermark 5% of 4 MiB
			time.Sleep(300 * time.Millisecond)     // a probe sees it
			var acked []string
			rnd := rand.New(rand.NewPCG(3, 4))
			refused := 0
			for i := 0; refused < 1000; i++ {
				line := fmt.Sprintf(`{"n":%d,"pad":"%016x%016x%016x%016x"}`, i, rnd.Uint64(), rnd.Uint64(), rnd.Uint64(), rnd.Uint64())
				switch err := c.Append(uint64(i), []byte(line+"\n"), 1); {
				case err == nil:
					acked = append(acked, line)
				case errors.Is(err, collector.ErrDiskFull):
					refused++
				default:
					t.Fatalf("Append = %v", err)
				}
			}
			if err := c.Close(context.Background()); err != nil {
				t.Errorf("Close on a full disk = %v", err)
			}
			seen := map[string]int{}
			for _, line := range readAll(t, spool) {
				seen[line]++
			}
			lost := 0
			for _, line := range acked {
				if seen[line] != 1 {
					lost++
				}
			}
			if lost > 0 || len(acked) == 0 {
				t.Errorf("%d of %d acknowledged events are not in the files once each after a stop on a full disk; want every one", lost, len(acked))
			}
		})
	}
}
