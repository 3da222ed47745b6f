package web_test

import (
	"reflect"
	"testing"

	"marquee/web"
)

// TestDepsStaySmall: the edge's collaborators are at most 20 — a field
// added is one removed (the rules live in services, not in web).
func TestDepsStaySmall(t *testing.T) {
	if n := reflect.TypeFor[web.Deps]().NumField(); n > 20 {
		t.Errorf("web.Deps has %d fields; want at most 20", n)
	}
}
