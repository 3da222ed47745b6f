package collector_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marquee/collector"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newCollector(tb testing.TB, cfg collector.Config) *collector.Collector {
	tb.Helper()
	if cfg.Instance == "" {
		cfg.Instance = "test"
	}
	c, err := collector.New(cfg, quiet, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// readAll decodes every file under dir (finished and .part) into lines.
func readAll(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := collector.NewReader(p, f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		if err := sc.Err(); err != nil && !strings.HasSuffix(p, ".part") {
			t.Fatalf("%s: %v", p, err)
		}
		return nil
	})
	return lines
}

func files(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Concurrent writers, every codec: after Close the files hold every line
// exactly once, and nothing is left half-written.
func TestEveryLineOnceEveryCodec(t *testing.T) {
	for _, codec := range collector.Codecs {
		t.Run(codec, func(t *testing.T) {
			dir := t.TempDir()
			c := newCollector(t, collector.Config{Dir: dir, Codec: codec, Shards: 3, RotateBytes: 50_000, FlushEvery: 5 * time.Millisecond})
			var want []string
			var mu sync.Mutex
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for i := range 500 {
						line := fmt.Sprintf(`{"g":%d,"i":%d,"pad":"%s"}`, g, i, strings.Repeat("x", i%50))
						if err := c.Append(uint64(g), []byte(line+"\n"), 1); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						want = append(want, line)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if err := c.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, dir)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("files hold %d lines; want the %d appended, each once", len(got), len(want))
			}
			fs := files(t, dir)
			if len(fs) < 3 {
				t.Errorf("%d files; want rotation by size to have made more than one a shard", len(fs))
			}
			for _, f := range fs {
				if strings.HasSuffix(f, ".part") || !strings.Contains(f, "/dt=") || !strings.Contains(f, "/hour=") || !strings.Contains(filepath.Base(f), "test-") {
					t.Errorf("file %s: want a finished, partitioned <instance>-<seq> name", f)
				}
			}
			if err := c.Append(0, []byte("{}\n"), 1); !errors.Is(err, collector.ErrClosed) {
				t.Errorf("Append after Close = %v; want ErrClosed", err)
			}
		})
	}
}

// Files older than RotateAge are finished even when nothing more comes.
func TestRotateByAge(t *testing.T) {
	dir := t.TempDir()
	c := newCollector(t, collector.Config{Dir: dir, RotateAge: 50 * time.Millisecond, FlushEvery: 10 * time.Millisecond})
	defer c.Close(context.Background())
	c.Append(0, []byte("{\"a\":1}\n"), 1)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if fs := files(t, dir); len(fs) == 1 && !strings.HasSuffix(fs[0], ".part") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("files %v; want one finished file after RotateAge", files(t, dir))
}

// In durable mode Append returns only once the line is in the file: a copy
// of the spool taken right then (as a crash would leave it) holds it, and
// a collector started on that copy finishes the interrupted files.
func TestDurableAppendIsInTheFileAndRecovers(t *testing.T) {
	dir := t.TempDir()
	c := newCollector(t, collector.Config{Dir: dir, Durable: true, FlushEvery: time.Hour, Shards: 2})
	defer c.Close(context.Background())
	var acked []string
	for i := range 200 {
		line := fmt.Sprintf(`{"i":%d}`, i)
		if err := c.Append(uint64(i), []byte(line+"\n"), 1); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, line)
	}
	crash := t.TempDir()
	for _, f := range files(t, dir) {
		rel, _ := filepath.Rel(dir, f)
		os.MkdirAll(filepath.Dir(filepath.Join(crash, rel)), 0o755)
		b, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(crash, rel), b, 0o644)
	}
	if got := readAll(t, crash); len(got) != len(acked) {
		t.Fatalf("a snapshot of the spool holds %d lines; want the %d acknowledged (FlushEvery is an hour: only durability wrote them)", len(got), len(acked))
	}
	r := newCollector(t, collector.Config{Dir: crash})
	r.Close(context.Background())
	got := readAll(t, crash)
	slices.Sort(got)
	slices.Sort(acked)
	if !slices.Equal(got, acked) {
		t.Fatalf("after recovery: %d lines; want the %d acknowledged", len(got), len(acked))
	}
	for _, f := range files(t, crash) {
		if strings.HasSuffix(f, ".part") {
			t.Errorf("%s left unfinished after recovery", f)
		}
	}
}

// shipper stores files in memory and fails while failing is set.
type shipper struct {
	mu      sync.Mutex
	failing atomic.Bool
	stored  map[string][]byte
	tries   atomic.Int64
}

func (s *shipper) Ship(ctx context.Context, key, path string) error {
	s.tries.Add(1)
	if s.failing.Load() {
		return errors.New("injected failure")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stored == nil {
		s.stored = map[string][]byte{}
	}
	s.stored[key] = b
	return nil
}

func (s *shipper) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.stored {
		out = append(out, k)
	}
	return out
}

// A failing store delays shipment but loses nothing; the spool bound turns
// events away (ErrFull) while files pile up, and accepts again once they
// are shipped; files left by a stopped collector ship at the next start.
func TestShippingRetriesSpoolBoundAndLeftovers(t *testing.T) {
	dir := t.TempDir()
	sh := &shipper{}
	sh.failing.Store(true)
	c := newCollector(t, collector.Config{Dir: dir, Shipper: sh, RotateBytes: 1000, FlushEvery: 5 * time.Millisecond,
		SpoolMax: 3000, Codec: "none", Shards: 1})
	line := []byte(`{"pad":"` + strings.Repeat("y", 200) + `"}` + "\n")
	full := false
	accepted := 0
	for i := 0; i < 200 && !full; i++ {
		err := c.Append(0, line, 1)
		switch {
		case errors.Is(err, collector.ErrFull):
			full = true
		case err != nil:
			t.Fatal(err)
		default:
			accepted++
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !full {
		t.Fatal("spool never reported full while the store failed")
	}
	sh.failing.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for c.Append(0, line, 1) != nil {
		if time.Now().After(deadline) {
			t.Fatal("still full 10 s after the store recovered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	accepted++ // the Append that got through
	if sh.tries.Load() <= int64(len(sh.keys())) {
		t.Errorf("%d tries for %d files; want retries after the failures", sh.tries.Load(), len(sh.keys()))
	}
	// Stop with the store failing again: finished files stay for the next run.
	sh.failing.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	c.Close(ctx)
	cancel()
	left := files(t, dir)
	if len(left) == 0 {
		t.Fatal("no files left after a shutdown with the store down")
	}
	sh.failing.Store(false)
	c2 := newCollector(t, collector.Config{Dir: dir, Shipper: sh, Codec: "none"})
	c2.Close(context.Background()) // drains the queue: the store works
	if rest := files(t, dir); len(rest) != 0 {
		t.Fatalf("files %v still in the spool after the next start shipped them", rest)
	}
	stored := 0
	for _, k := range sh.keys() {
		if !strings.HasPrefix(k, "dt=") || strings.Contains(k, "\\") {
			t.Errorf("key %q: want dt=…/hour=…/<name>", k)
		}
		stored += strings.Count(string(sh.stored[k]), "\n")
	}
	if stored != accepted {
		t.Errorf("stored objects hold %d events; want the %d accepted", stored, accepted)
	}
}

// The files open with the standard lz4 and zstd tools (skipped where they
// are not installed).
func TestFilesOpenWithStandardTools(t *testing.T) {
	for codec, tool := range map[string]string{"lz4": "lz4", "zstd": "zstd"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Logf("%s not installed: not checked", tool)
			continue
		}
		dir := t.TempDir()
		c := newCollector(t, collector.Config{Dir: dir, Codec: codec})
		want := ""
		for i := range 1000 {
			line := fmt.Sprintf("{\"i\":%d}\n", i)
			c.Append(0, []byte(line), 1)
			want += line
		}
		c.Close(context.Background())
		fs := files(t, dir)
		if len(fs) != 1 {
			t.Fatalf("%s: files %v; want one", codec, fs)
		}
		out, err := exec.Command(path, "-dc", fs[0]).Output()
		if err != nil || string(out) != want {
			t.Errorf("%s -dc %s: %v, %d bytes; want the %d bytes written", tool, fs[0], err, len(out), len(want))
		}
	}
}
