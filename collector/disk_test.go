package collector_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

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
// returns every acknowledged event is in the files. In durable mode an
// event is acknowledged only once written, so none can be lost.
func TestFullDiskKeepsAcknowledgedEvents(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) { fullDisk(t, durable) })
	}
}

func fullDisk(t *testing.T, durable bool) {
	mnt := tmpfs.Mount(t, 4<<20)
	spool := filepath.Join(mnt, "events")
	c := newCollector(t, collector.Config{Dir: spool, MinFree: -1, FlushEvery: 5 * time.Millisecond, Codec: "none", Shards: 1, Durable: durable})
	filler := tmpfs.Fill(t, mnt)
	var acked []string
	for i := range 2000 {
		line := fmt.Sprintf(`{"n":%d,"pad":"%0100d"}`, i, i)
		if err := c.Append(1, []byte(line+"\n"), 1); err == nil {
			acked = append(acked, line)
		}
		if i%50 == 0 {
			time.Sleep(5 * time.Millisecond) // let the writer try (and fail)
		}
	}
	if len(acked) == 2000 {
		t.Fatal("every event was accepted on a full disk: the writes never failed")
	}
	os.Remove(filler)
	eventually(t, func() bool { return c.Append(1, []byte("{\"after\":1}\n"), 1) == nil })
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, spool)
	for _, line := range acked {
		if !slices.Contains(got, line) {
			t.Fatalf("acknowledged event %s is not in the files after space returned (%d acknowledged, %d lines in files)", line, len(acked), len(got))
		}
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
