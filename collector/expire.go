package collector

import (
	"os"
	"path/filepath"
	"time"
)

// Expire deletes the finished files of the spool at dir that were last
// written before before (their newest event is older), and the partition
// directories it leaves empty: the retention of event files
// (-events-retention). It returns how many files and bytes it deleted.
// Run it only on a spool without a Shipper: there a finished file is
// waiting to be shipped, and shipping deletes it.
func Expire(dir string, before time.Time) (files int, bytes int64, err error) {
	finished, err := FinishedFiles(dir)
	if err != nil {
		return 0, 0, err
	}
	parents := map[string]bool{}
	for _, p := range finished {
		fi, err := os.Stat(p)
		if err != nil || !fi.ModTime().Before(before) {
			continue
		}
		if err := os.Remove(p); err != nil {
			return files, bytes, err
		}
		files++
		bytes += fi.Size()
		parents[filepath.Dir(p)] = true
	}
	for p := range parents {
		// hour=HH, then dt=…: os.Remove deletes a directory only when it
		// is empty, which is the test.
		if os.Remove(p) == nil {
			os.Remove(filepath.Dir(p))
		}
	}
	return files, bytes, nil
}
