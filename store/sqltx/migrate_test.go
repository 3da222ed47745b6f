package sqltx

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// TestMigrationsSplit: every migration, spelled in a dialect that fills
// every placeholder, splits into statements of one statement each (a
// ";" before a comment on its line would join two, which MySQL refuses)
// and leaves no placeholder unspelled.
func TestMigrationsSplit(t *testing.T) {
	d := Dialect{ID: "ID", Key: "KEY", Blob: "BLOB", Table: " TABLE", Clustered: " CLUSTERED", BigText: "BIGTEXT",
		Str: func(n int) string { return fmt.Sprintf("STR(%d)", n) }, Bytes: func(n int) string { return fmt.Sprintf("BYTES(%d)", n) },
		Name: func(x string) string { return "`" + x + "`" }}
	names, err := fs.Glob(Migrations, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	for _, name := range names {
		b, _ := fs.ReadFile(Migrations, name)
		for _, stmt := range statements(d.spell(string(b))) {
			var code strings.Builder // the statement without its comments
			for line := range strings.Lines(stmt) {
				c, _, _ := strings.Cut(line, "--")
				code.WriteString(c)
			}
			if strings.Contains(code.String(), ";") || strings.Contains(code.String(), "{{") {
				t.Errorf("%s: statement %q holds a ';' (two statements) or an unspelled placeholder", name, stmt)
			}
		}
	}
	if got := d.spell("{{str64}} {{bytes9}} {{name:key}} {{bigtext}}"); got != "STR(64) BYTES(9) `key` BIGTEXT" {
		t.Errorf("spell = %q", got)
	}
	if got := (Dialect{Blob: "BLOB"}).spell("{{str64}} {{bytes9}} {{name:key}} {{bigtext}}{{table}}"); got != "text BLOB key text" {
		t.Errorf("spell without the optional spellings = %q; want text, Blob, the name, text", got)
	}
}
