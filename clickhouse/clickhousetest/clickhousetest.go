// Package clickhousetest gives tests a ClickHouse database of their own on
// the server MARQUEE_TEST_CLICKHOUSE names (clickhouse://host:port/;
// .ci/run starts one), dropped when the test ends; without it they skip.
package clickhousetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"marquee/clickhouse"
)

// DSN returns the DSN of a new database for t (created by the first
// Migrate), dropped at t's end, or skips t without a server.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("MARQUEE_TEST_CLICKHOUSE")
	if base == "" {
		t.Skip("MARQUEE_TEST_CLICKHOUSE is not set: no ClickHouse server (.ci/run starts one; e.g. clickhouse://127.0.0.1:8123/)")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("MARQUEE_TEST_CLICKHOUSE: %v", err)
	}
	var b [4]byte
	rand.Read(b[:])
	db := "marquee_test_" + hex.EncodeToString(b[:])
	u.Path = "/" + db
	dsn := u.String()
	t.Cleanup(func() {
		u.Path = "/default"
		if c, err := clickhouse.Open(u.String()); err == nil {
			c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db)
		}
	})
	return dsn
}

// Open returns a client of a new database for t (see DSN), migrated.
func Open(t testing.TB) *clickhouse.Client {
	t.Helper()
	c, err := clickhouse.Open(DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}
