package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"marquee/store/sqlite"
	"marquee/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (storetest.Store, func() storetest.Store) {
		path := filepath.Join(t.TempDir(), "sub", "m.db")
		open := func() storetest.Store {
			st, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		return open(), open
	})
}
