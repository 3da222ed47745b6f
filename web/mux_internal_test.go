package web

import "testing"

// A pattern's tail matches the paths it names and no other.
func TestMatchTail(t *testing.T) {
	for _, c := range []struct {
		tail, path string
		want       bool
	}{
		{"{id}", "42", true},
		{"{id}", "", false},
		{"{id}", "42/x", false},
		{"{id}/qr", "42/qr", true},
		{"{id}/qr", "42/qrx", false},
		{"{id}/qr", "/qr", false},
		{"{kind}/{token}", "i/abc", true},
		{"{kind}/{token}", "i/", false},
		{"{kind}/{token}", "i", false},
		{"{kind}/{token}", "i/abc/d", false},
		{"{asset...}", "", true},
		{"{asset...}", "a/b/c", true},
		{"{id}/{rest...}", "7/a/b", true},
		{"{id}/{rest...}", "7", false},
	} {
		if got := matchTail(c.tail, []byte(c.path), new(params)); got != c.want {
			t.Errorf("matchTail(%q, %q) = %v; want %v", c.tail, c.path, got, c.want)
		}
	}
}
