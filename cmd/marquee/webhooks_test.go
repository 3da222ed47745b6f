package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// A webhook on a link's clicks, created over the API, gets every click of
// that link, signed with the secret the create answered once; a key
// without webhooks:admin may not touch webhooks; bad input is named; the
// delivery log and a test event work over the API.
func TestWebhooksOverHTTP(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-webhooks-allow-http", "-webhooks-allow-private", "-events-flush", "20ms")
	var mu sync.Mutex
	var bodies []string
	var headers []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies, headers = append(bodies, string(b)), append(headers, r.Header.Clone())
		mu.Unlock()
	}))
	defer srv.Close()

	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com/a","code":"promo"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com/b","code":"other"}`), 201, "")
	r := in.admin("POST", "/api/v1/webhooks", `{"url":"ftp://x","events":["click","nope","click"],"link":"promo","adId":3}`)
	for _, want := range []string{`"url":`, `"events[1]":"unknown event \"nope\"`, `"events[2]":"\"click\" is given twice"`, `"link":"set at most one of`} {
		if r.status != 400 || !strings.Contains(r.body, want) {
			t.Errorf("POST a bad webhook = %d %s; want 400 naming %s", r.status, r.body, want)
		}
	}
	r = in.admin("POST", "/api/v1/webhooks", fmt.Sprintf(`{"url":%q,"events":["click"],"link":"promo"}`, srv.URL+"/in"))
	var created struct {
		ID     int64
		State  string
		Secret string
	}
	if json.Unmarshal([]byte(r.body), &created); r.status != 201 || !strings.HasPrefix(created.Secret, "whsec_") || created.State != "active" {
		t.Fatalf("POST /api/v1/webhooks = %d %s; want 201 with the secret", r.status, r.body)
	}
	if r := in.admin("GET", "/api/v1/webhooks", ""); r.status != 200 || strings.Contains(r.body, "whsec_") || !strings.Contains(r.body, `"link":"promo"`) {
		t.Fatalf("GET /api/v1/webhooks = %d %s; want the webhook, never its secret", r.status, r.body)
	}
	key, _ := in.createKey("reader", "links:read", "reports:read")
	if r := in.do("GET", "/api/v1/webhooks", key, "", ""); r.status != 403 {
		t.Fatalf("GET /api/v1/webhooks with a key without webhooks:admin = %d %s; want 403", r.status, r.body)
	}
	for range 3 {
		in.follow("GET", "promo")
		in.follow("GET", "other")
	}
	wh, _ := standardwebhooks.NewWebhook(created.Secret)
	eventually(t, 15*time.Second, func() string {
		mu.Lock()
		defer mu.Unlock()
		clicks := 0
		for i, b := range bodies {
			if err := wh.Verify([]byte(b), headers[i]); err != nil {
				return fmt.Sprintf("delivery %d does not verify with the secret: %v", i, err)
			}
			var p struct {
				Data struct{ Events []map[string]any }
			}
			json.Unmarshal([]byte(b), &p)
			for _, e := range p.Data.Events {
				if e["type"] != "click" || e["code"] != "promo" {
					return fmt.Sprintf("delivered %v; want only promo's clicks", e)
				}
				clicks++
			}
		}
		if clicks != 3 {
			return fmt.Sprintf("%d clicks delivered; want 3", clicks)
		}
		return ""
	})
	path := fmt.Sprintf("/api/v1/webhooks/%d", created.ID)
	// The delivery log is written once the receiver has answered: after
	// the receiver saw the bodies.
	eventually(t, 15*time.Second, func() string {
		if r := in.admin("GET", path+"/deliveries", ""); r.status != 200 || !strings.Contains(r.body, `"status":200`) {
			return fmt.Sprintf("GET deliveries = %d %s; want the successful attempts", r.status, r.body)
		}
		return ""
	})
	if r := in.admin("POST", path+"/test", ""); r.status != 200 || !strings.Contains(r.body, `"status":200`) {
		t.Fatalf("POST test = %d %s; want a delivered test event", r.status, r.body)
	}
	if r := in.admin("POST", path+"/disable", ""); r.status != 200 || !strings.Contains(r.body, `"state":"disabled"`) || !strings.Contains(r.body, `"disabledReason":"disabled by`) {
		t.Fatalf("POST disable = %d %s", r.status, r.body)
	}
	in.expect(in.admin("DELETE", path, ""), 204, "")
	in.expect(in.admin("GET", path, ""), 404, "")
}

// Without -webhooks-allow-http a webhook must be https; without
// -webhooks-allow-private its test event to a loopback receiver is
// refused before connecting.
func TestWebhooksRefuseHTTPAndPrivate(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	r := in.admin("POST", "/api/v1/webhooks", `{"url":"http://hooks.example/in","events":["click"]}`)
	if r.status != 400 || !strings.Contains(r.body, "must be https") {
		t.Fatalf("POST an http webhook = %d %s; want 400", r.status, r.body)
	}
	r = in.admin("POST", "/api/v1/webhooks", `{"url":"https://127.0.0.1:1/in","events":["click"]}`)
	var created struct{ ID int64 }
	json.Unmarshal([]byte(r.body), &created)
	for _, u := range []string{fmt.Sprintf("/api/v1/webhooks/%d/test", created.ID)} {
		if r := in.admin("POST", u, ""); r.status != 200 || !strings.Contains(r.body, "server-side request forgery") {
			t.Fatalf("POST %s = %d %s; want the attempt refused", u, r.status, r.body)
		}
	}
}
