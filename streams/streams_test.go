package streams

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	known := []string{"brokers", "topic", "key"}
	for _, c := range []struct {
		in, want, err string
	}{
		{"brokers=a:9092,b:9092,topic=t", "brokers=a:9092,b:9092 topic=t", ""},
		{"topic=t, key=user", "key=user topic=t", ""},
		{"a:9092,topic=t", "", `"a:9092" is not name=value`},
		{"topik=t", "", `unknown option "topik"`},
		{"topic=a,topic=b", "", `option "topic" given twice`},
	} {
		got, err := ParseOptions("-f", c.in, known...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseOptions(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		var parts []string
		for k, v := range got {
			parts = append(parts, k+"="+v)
		}
		slices.Sort(parts)
		if err != nil || strings.Join(parts, " ") != c.want {
			t.Errorf("ParseOptions(%q) = %v, %v; want %s", c.in, parts, err, c.want)
		}
	}
}

// merge orders the lines of several files by their receivedAt, keeping
// each file's order among equal stamps, in chunks whose offsets say
// where each line is in its file: checked against a stable sort.
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for round := range 200 {
		type line struct {
			file   string
			offset int64
			text   string
		}
		var sources []chunk
		var all []line
		for f := range 1 + r.IntN(5) {
			name := fmt.Sprintf("f%d", f)
			start := int64(r.IntN(100))
			var data []byte
			at := base
			for n := range r.IntN(30) {
				at = at.Add(time.Duration(r.IntN(3)) * time.Millisecond) // equal stamps too
				text := fmt.Sprintf(`{"receivedAt":"%s","n":"%s-%d"}`, at.Format("2006-01-02T15:04:05.000000000Z"), name, n)
				all = append(all, line{name, start + int64(len(data)), text})
				data = append(append(data, text...), '\n')
			}
			sources = append(sources, chunk{file: name, offset: start, data: data})
		}
		want := slices.Clone(all)
		slices.SortStableFunc(want, func(a, b line) int { return strings.Compare(a.text[:45], b.text[:45]) })
		var got []line
		for _, c := range merge(sources) {
			off := c.offset
			for l := range strings.SplitSeq(strings.TrimSuffix(string(c.data), "\n"), "\n") {
				got = append(got, line{c.file, off, l})
				off += int64(len(l) + 1)
			}
		}
		// Among equal stamps of different files either order is right:
		// compare the stamps' order and each file's own order.
		if len(got) != len(want) {
			t.Fatalf("round %d: merge gave %d lines; want %d", round, len(got), len(want))
		}
		for i := range got {
			if got[i].text[:45] != want[i].text[:45] {
				t.Fatalf("round %d: line %d = %s; want the stamp of %s", round, i, got[i].text, want[i].text)
			}
		}
		pos := map[string]int64{}
		for _, l := range got {
			if l.offset < pos[l.file] {
				t.Fatalf("round %d: %s at %d after %d: a file's lines out of order", round, l.file, l.offset, pos[l.file])
			}
			pos[l.file] = l.offset
			if !slices.Contains(all, l) {
				t.Fatalf("round %d: line %+v is not where its file has it", round, l)
			}
		}
	}
}

// timedBroker records when each publish began and how many messages it
// carried.
type timedBroker struct {
	mu    sync.Mutex
	at    []time.Time
	sizes []int
}

func (b *timedBroker) Publish(_ context.Context, msgs []Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at, b.sizes = append(b.at, time.Now()), append(b.sizes, len(msgs))
	return nil
}
func (b *timedBroker) RunBytes() int { return 0 }
func (b *timedBroker) Close() error  { return nil }

// TestLinger: with Linger, publishes that are not full are at least
// Linger apart; a full batch does not wait; Close does not wait. The last
// two are shown against a Linger far longer than the test's bounds (no
// timing is asserted: a full batch or a Close that waited for the linger
// would miss bounds ten times shorter than it).
func TestLinger(t *testing.T) {
	b := &timedBroker{}
	f, err := Open(Config{Name: "timed", Dir: t.TempDir(), Batch: 10, Linger: 300 * time.Millisecond}, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Recover(); err != nil {
		t.Fatal(err)
	}
	var off int64
	write := func(f *Forwarder, n int) {
		var lines []byte
		for range n {
			lines = fmt.Appendf(lines, `{"receivedAt":"2026-11-27T10:00:00.000000000Z","id":"e%d"}`+"\n", off)
		}
		f.Written("a.ndjson", off, lines)
		off += int64(len(lines))
	}
	for range 4 { // lines every 50 ms: four publishes at most 300 ms apart would take 150 ms
		write(f, 1)
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	for i := 1; i < len(b.at); i++ {
		if gap := b.at[i].Sub(b.at[i-1]); gap < 290*time.Millisecond {
			t.Errorf("publishes %d and %d of %v were %v apart; want ≥ 300 ms", i-1, i, b.sizes, gap)
		}
	}
	b.mu.Unlock()
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}

	long := &timedBroker{}
	const linger = time.Minute
	g, err := Open(Config{Name: "long", Dir: t.TempDir(), Batch: 10, Linger: linger}, long)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Recover(); err != nil {
		t.Fatal(err)
	}
	write(g, 25) // full batches (10, 10), then the rest of 5
	for deadline := time.Now().Add(linger / 10); ; time.Sleep(5 * time.Millisecond) {
		long.mu.Lock()
		full := slices.Clone(long.sizes)
		long.mu.Unlock()
		if len(full) >= 2 {
			if full[0] != 10 || full[1] != 10 {
				t.Errorf("after 25 lines at once: publishes of %v; want two full ones (10, 10) first", full)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 25 lines at once: publishes of %v; want two full ones without the linger's wait", full)
		}
	}
	cctx, ccancel := context.WithTimeout(context.Background(), linger/10)
	defer ccancel()
	if err := g.Close(cctx); err != nil {
		t.Errorf("Close = %v: it waited for the linger", err)
	}
}
