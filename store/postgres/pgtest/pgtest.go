// Package pgtest gives tests a PostgreSQL schema of their own.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// DSN returns the DSN of a fresh schema in the test database named by
// MARQUEE_TEST_POSTGRES, dropped when t ends; it skips t when the variable
// is unset. Each test gets its own schema, so tests run in parallel; its
// connections carry the schema's name as application_name.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("MARQUEE_TEST_POSTGRES")
	if base == "" {
		t.Skip("MARQUEE_TEST_POSTGRES is not set: skipping a test that needs PostgreSQL (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("MARQUEE_TEST_POSTGRES: %v", err)
	}
	raw := make([]byte, 6)
	rand.Read(raw)
	schema := "t_" + hex.EncodeToString(raw)
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema) // so a test can find its own connections in pg_stat_activity
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	})
	return u.String()
}
