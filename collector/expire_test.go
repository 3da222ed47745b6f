package collector_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"marquee/collector"
)

// Expire deletes exactly the finished files last written before the
// cutoff — as an injected clock sets their times —, leaves newer files,
// files being written (tmp/) and what others keep in the spool, and
// removes the partitions it empties.
func TestExpire(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	files := map[string]time.Time{
		"dt=2026-10-01/hour=09/a-1.ndjson.lz4": now.Add(-56 * 24 * time.Hour),
		"dt=2026-10-27/hour=11/a-2.ndjson.lz4": now.Add(-30*24*time.Hour - time.Minute),
		"dt=2026-10-27/hour=12/a-3.ndjson.lz4": now.Add(-30*24*time.Hour + time.Minute),
		"dt=2026-11-26/hour=11/a-4.ndjson.lz4": now.Add(-time.Hour),
		"tmp/a-5.part":                         now.Add(-90 * 24 * time.Hour),
		"streams/kafka.cursor":                 now.Add(-90 * 24 * time.Hour),
	}
	for name, at := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	n, size, err := collector.Expire(dir, now.Add(-30*24*time.Hour))
	if err != nil || n != 2 || size != 10 {
		t.Fatalf("Expire(30 days) = %d files, %d bytes, %v; want 2 files, 10 bytes", n, size, err)
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	want := []string{"dt=2026-10-27", "dt=2026-10-27/hour=12", "dt=2026-10-27/hour=12/a-3.ndjson.lz4",
		"dt=2026-11-26", "dt=2026-11-26/hour=11", "dt=2026-11-26/hour=11/a-4.ndjson.lz4",
		"streams", "streams/kafka.cursor", "tmp", "tmp/a-5.part"}
	slices.Sort(left)
	if !slices.Equal(left, want) {
		t.Errorf("left after Expire:\n%v\nwant\n%v", left, want)
	}
	if n, _, err := collector.Expire(filepath.Join(dir, "none"), now); err != nil || n != 0 {
		t.Errorf("Expire(a spool that does not exist) = %d, %v; want 0, nil", n, err)
	}
}
