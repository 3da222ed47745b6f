package feed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Save writes the saved view (Config.Saved: the index), with the store's
// id and the changelog position it reflects, to path (a temporary file, synced, then renamed over it),
// for Start to begin from. The position is read before the index: a
// change applied in between is in the index and is applied again after a
// restore, which is harmless (applying reads the ad's current row).
func (f *Feed) Save(path, storeID string) error {
	pos := f.Position()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s %d\n", storeID, pos)
	if f.cfg.Saved == nil {
		return errors.New("feed: no view to save (Config.Saved)")
	}
	if err := f.cfg.Saved.Save(&buf); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Start fills the views before serving: the saved one from what Save left at path
// when it was saved from this store (storeID) and the changelog still
// holds every change since, which it then applies; otherwise — no saved
// index, another store's, a damaged one, a store older than it, a
// changelog trimmed past it, a bulk load or a hole since — with a full
// Load. Either way the index ends exactly as a full load would make it.
// It reports whether the saved index was used.
func (f *Feed) Start(ctx context.Context, path, storeID string) (restored bool, err error) {
	if data, rerr := os.ReadFile(path); rerr == nil {
		if f.restore(ctx, data, storeID) {
			return true, nil
		}
	}
	return false, f.Load(ctx)
}

// restore tries the saved index data; false leaves a full load to do.
func (f *Feed) restore(ctx context.Context, data []byte, storeID string) bool {
	line, rest, ok := bytes.Cut(data, []byte("\n"))
	id, seq, ok2 := bytes.Cut(line, []byte(" "))
	pos, err := strconv.ParseInt(string(seq), 10, 64)
	if !ok || !ok2 || err != nil || string(id) != storeID {
		return false
	}
	last, err := f.src.LastSeq(ctx)
	if err != nil || pos > last || f.cfg.Saved == nil || f.cfg.Saved.Restore(bytes.NewReader(rest)) != nil {
		return false
	}
	// The other views load in full; then every view catches up.
	b := f.reload(ctx)
	for _, v := range f.views {
		if any(v) == any(f.cfg.Saved) {
			continue
		}
		if err := v.Apply(ctx, b); err != nil {
			return false
		}
	}
	f.mu.Lock()
	f.pos, f.gapSince = pos, time.Time{}
	f.mu.Unlock()
	f.m.lastSeq.Set(float64(pos))
	reload, holed, err := f.catchUp(ctx)
	return err == nil && reload == "" && !holed
}
