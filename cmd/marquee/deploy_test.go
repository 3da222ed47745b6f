package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDeployMetricsExist: every metric the alert rules
// (deploy/prometheus/alerts.yml) and the Grafana dashboard
// (deploy/grafana/marquee.json) query is one a running instance exports,
// so a renamed metric cannot leave an alert that never fires.
func TestDeployMetricsExist(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	in.get("/api/v1/ad")
	in.get("/r/nope")
	exported := in.get("/metrics").body
	name := regexp.MustCompile(`\b(marquee_[a-z_]+|process_resident_memory_bytes)\b`)
	for _, f := range []string{"../../deploy/prometheus/alerts.yml", "../../deploy/grafana/marquee.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllString(string(b), -1) {
			family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
			if !strings.Contains(exported, "\n# TYPE "+family+" ") && !strings.HasPrefix(exported, "# TYPE "+family+" ") {
				t.Errorf("%s queries %s, which /metrics does not export", f, m)
			}
		}
	}
}
