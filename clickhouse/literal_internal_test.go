package clickhouse

import (
	"context"
	"os"
	"testing"
)

// TestLiteralRoundTrip: hostile strings quoted by literal reach ClickHouse
// as themselves (SELECT gives them back, unescaped from TabSeparated), and
// never end the literal early.
func TestLiteralRoundTrip(t *testing.T) {
	dsn := os.Getenv("MARQUEE_TEST_CLICKHOUSE")
	if dsn == "" {
		t.Skip("MARQUEE_TEST_CLICKHOUSE is not set (clickhouse://host:8123/): skipping a test that needs ClickHouse")
	}
	c, err := Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	r := &Reports{c: c}
	for _, s := range []string{"", "plain", `it's`, `back\slash`, `\'`, `'; DROP TABLE events; --`, "tab\tnew\nline\r\x00", `\\'\\`, "日本 \u2028"} {
		rows, err := r.rows(context.Background(), "SELECT "+literal(s)+", 1")
		if err != nil || len(rows) != 1 || len(rows[0]) != 2 || rows[0][0] != s || rows[0][1] != "1" {
			t.Errorf("SELECT %s = %q, %v; want %q", literal(s), rows, err, s)
		}
	}
}
