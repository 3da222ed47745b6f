package clickhouse

import (
	"context"
	"os"
	"testing"
)

// TestLiteralRoundTrip: hostile strings quoted by literal reach ClickHouse
// as themselves (SELECT gives them back, read from RowBinary), and
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
		a, err := r.query(context.Background(), "SELECT "+literal(s)+", toInt64(1)")
		if err != nil {
			t.Fatalf("SELECT %s: %v", literal(s), err)
		}
		if got, one := a.string(), a.int64(); a.err != nil || got != s || one != 1 || a.more() {
			t.Errorf("SELECT %s = %q, %d, %v; want %q, 1 and nothing more", literal(s), got, one, a.err, s)
		}
	}
}
