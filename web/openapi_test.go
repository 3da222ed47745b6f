package web_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"marquee/index"
	"marquee/web"
)

// TestOpenAPIDescribesEveryRoute fails when routes.go has a route that
// docs/openapi.yaml does not describe, or the reverse.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	raw, err := os.ReadFile("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	srv := web.NewServer(web.Config{}, web.Deps{Now: time.Now, Index: index.New(time.Now), Registry: prometheus.NewRegistry()})
	inCode := map[string]bool{}
	for _, r := range srv.Routes() {
		key := strings.ToLower(r.Method) + " " + r.Pattern
		inCode[key] = true
		op, ok := doc.Paths[r.Pattern][strings.ToLower(r.Method)]
		if !ok {
			t.Errorf("route %s %s is missing from docs/openapi.yaml", r.Method, r.Pattern)
			continue
		}
		want := string(r.Scope)
		if want == "" {
			want = "public"
		}
		if got, _ := op.(map[string]any)["x-scope"].(string); got != want {
			t.Errorf("docs/openapi.yaml gives %s %s x-scope %q; routes.go gives it %q", r.Method, r.Pattern, got, want)
		}
	}
	for path, ops := range doc.Paths {
		for op := range ops {
			if op != "parameters" && !inCode[op+" "+path] {
				t.Errorf("docs/openapi.yaml describes %s %s, which routes.go does not serve", strings.ToUpper(op), path)
			}
		}
	}
}
