package main

import (
	"strings"
	"testing"
)

// TestDemandPartnersAsObjects: a demand partner made through the API
// (every problem named; a name taken is a 409; Marquee's own name
// refused), answered with its headers' names and never their values —
// nor does the audit log hold them —, listed with its health on the
// instance, replaced keeping its headers when the body gives none,
// deleted.
func TestDemandPartnersAsObjects(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	in.expect(in.admin("POST", "/api/v1/demand-partners", `{"name":"marquee","endpoint":"ftp://x","formats":["banner","print"],"timeoutMs":0,"bidAdjustment":0,"headers":{"Content-Type":"x"}}`), 400,
		`{"error":"invalid demand partner","problems":{"bidAdjustment":"must be a number above 0 and at most 10","endpoint":"must be an http or https URL of at most 2048 bytes","formats[1]":"must be one of banner, video, audio, native","headers.Content-Type":"is set by Marquee","name":"\"marquee\" is Marquee's own component","timeoutMs":"must be an integer from 1 to 2000"}}`)
	in.expect(in.admin("POST", "/api/v1/demand-partners", `{"endpoint":"https://bid.example/rtb","formats":["banner"]}`), 400,
		`{"error":"invalid demand partner","problems":{"name":"is required: the partner's name, a bidder code"}}`)
	body := `{"name":"dsp-one","endpoint":"https://bid.example/rtb","formats":["video","banner"],"qps":50,"placements":["side"],"headers":{"X-Api-Key":"secret-value-1"},"gzip":true}`
	r := in.admin("POST", "/api/v1/demand-partners", body)
	if r.status != 201 || strings.Contains(r.body, "secret-value-1") || !strings.Contains(r.body, `"headers":["X-Api-Key"]`) ||
		!strings.Contains(r.body, `"formats":["banner","video"],"timeoutMs":200,"qps":50,"bidAdjustment":1`) {
		t.Fatalf("a partner = %d %s; want 201, its header named and not shown, the defaults", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/demand-partners", body), 409, "")
	if r := in.admin("GET", "/api/v1/demand-partners", ""); r.status != 200 || !strings.Contains(r.body, `"health":{"requests":0,"bids":0,"wins":0,"dropped":{},"paused":false}`) {
		t.Errorf("partners = %d %s; want dsp-one with its health", r.status, r.body)
	}
	in.expect(in.admin("PUT", "/api/v1/demand-partners/dsp-one", `{"name":"other","endpoint":"https://bid.example/rtb","formats":["banner"]}`), 400, "")
	if r := in.admin("PUT", "/api/v1/demand-partners/dsp-one", `{"endpoint":"https://bid.example/v2","formats":["banner"],"timeoutMs":120}`); r.status != 200 ||
		!strings.Contains(r.body, `"headers":["X-Api-Key"]`) || !strings.Contains(r.body, `"timeoutMs":120`) {
		t.Errorf("a replace without headers = %d %s; want the header kept", r.status, r.body)
	}
	if r := in.admin("GET", "/api/v1/audit?entity=demandPartner", ""); r.status != 200 || strings.Contains(r.body, "secret-value-1") || !strings.Contains(r.body, `"timeoutMs":120`) {
		t.Errorf("the audit log of partners = %d %s; want the change, never the header's value", r.status, r.body)
	}
	in.expect(in.admin("DELETE", "/api/v1/demand-partners/dsp-one", ""), 204, "")
	in.expect(in.admin("GET", "/api/v1/demand-partners/dsp-one", ""), 404, "")
}
