package storetest

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"marquee/store"
	"marquee/store/mysql"
	"marquee/store/mysql/mysqltest"
	"marquee/store/sqlite"
)

// Backend is a store that the tests of a package built on stores (the
// feed, the reports) run on: a fresh database for each test, removed when
// it ends (skipping the test when its server is not configured), its
// stores, and a raw handle for changes behind the stores' back ("?"
// placeholders).
type Backend struct {
	Name  string
	NewDB func(testing.TB) string
	Open  func(ctx context.Context, db string) (store.Store, error)
	Raw   func(testing.TB, string) *sql.DB
}

// Backends are SQLite (in a temp dir) and MySQL (MARQUEE_TEST_MYSQL).
// PostgreSQL's stores run the conformance suite and the cluster tests
// of cmd/marquee.
var Backends = []Backend{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "m.db") },
		func(ctx context.Context, db string) (store.Store, error) { return sqlite.Open(ctx, db) }, rawSQLite},
	{"mysql", mysqltest.DSN,
		func(ctx context.Context, db string) (store.Store, error) { return mysql.Open(ctx, db, nil) }, mysqltest.Raw},
}

// EachBackend runs test on every backend, each on a database of its own.
func EachBackend(t *testing.T, test func(t *testing.T, be Backend, db string)) {
	for _, be := range Backends {
		t.Run(be.Name, func(t *testing.T) { test(t, be, be.NewDB(t)) })
	}
}

// OpenStore opens a store on db, closed when t ends.
func (be Backend) OpenStore(t testing.TB, db string) store.Store {
	t.Helper()
	st, err := be.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func rawSQLite(t testing.TB, path string) *sql.DB {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
