package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Every kind of error answers its status, headers and body to the byte
// (docs/api.md, "Errors"): the ones of the ad routes are in TestAdLifecycle,
// TestAuth and TestBadInput, 503s in the outage and spool tests; these are
// the rest.
func TestErrorResponses(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	now := time.Now()
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"landing","startAt":"2024-01-01T00:00:00Z","endAt":"2031-01-01T00:00:00Z","url":"https://example.com/a"}`), 201, `{"id":"1"}`)
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com/s","code":"spring","maxClicks":1}`), 201, "")
	// A link cannot be created expired; a replace with a past expiry ends it.
	past := now.Add(-time.Hour).Format(time.RFC3339)
	in.expect(in.admin("POST", "/api/v1/links", fmt.Sprintf(`{"url":"https://example.com/e","code":"gone","expiresAt":%q}`, past)), 400,
		`{"error":"invalid link","problems":{"expiresAt":"must be in the future: a new link would be expired at once (to end a link, replace it with a past expiresAt)"}}`)
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://example.com/e","code":"gone"}`), 201, "")
	in.expect(in.admin("PUT", "/api/v1/links/gone", fmt.Sprintf(`{"url":"https://example.com/e","code":"gone","expiresAt":%q}`, past)), 200, "")
	if r := in.follow("GET", "spring"); r.status != 302 {
		t.Fatalf("first click of spring = %d %s; want 302", r.status, r.body)
	}

	bigLink := `{"url":"https://x.test/` + strings.Repeat("a", 66000) + `"}`
	for _, c := range []struct {
		name       string
		r          response
		status     int
		body       string
		header, is string
	}{
		{"unknown code", in.follow("GET", "nope"), 404, `{"error":"no link \"nope\""}`, "X-Content-Type-Options", "nosniff"},
		{"path quoted", in.do("GET", "/nope%0A%3Cscript%3E", "", "", ""), 404, `{"error":"no route for \"/nope\\n<script>\""}`, "X-Content-Type-Options", "nosniff"},
		{"JSON answered", in.do("GET", "/api/v1/ad?country=TW", "", "", ""), 200, `{"items":[{"title":"landing","endAt":"2031-01-01T00:00:00.000Z"}]}`, "X-Content-Type-Options", "nosniff"},
		{"code that cannot be", in.follow("GET", "a.b"), 404, `{"error":"no link \"a.b\""}`, "", ""},
		{"expired", in.follow("GET", "gone"), 410, `{"error":"link \"gone\" has expired"}`, "", ""},
		{"at its limit", in.follow("GET", "spring"), 410, `{"error":"link \"spring\" has reached its maximum number of clicks"}`, "", ""},
		{"HEAD at its limit", in.follow("HEAD", "spring"), 410, ``, "", ""},
		{"admin get unknown", in.admin("GET", "/api/v1/links/nope", ""), 404, `{"error":"no link \"nope\""}`, "", ""},
		{"admin replace unknown", in.admin("PUT", "/api/v1/links/nope", `{"url":"https://x.test"}`), 404, `{"error":"no link \"nope\""}`, "", ""},
		{"admin delete unknown", in.admin("DELETE", "/api/v1/links/nope", ""), 404, `{"error":"no link \"nope\""}`, "", ""},
		{"taken code", in.admin("POST", "/api/v1/links", `{"url":"https://x.test","code":"spring"}`), 409, `{"error":"create link: code \"spring\" is taken"}`, "", ""},
		{"no such ad", in.admin("POST", "/api/v1/links", `{"url":"https://x.test","adId":"99"}`), 400, `{"error":"invalid link","problems":{"adId":"no ad 99"}}`, "", ""},
		{"code cannot change", in.admin("PUT", "/api/v1/links/spring", `{"url":"https://x.test","code":"autumn"}`), 400,
			`{"error":"invalid link","problems":{"code":"cannot change; create a new link and delete this one"}}`, "", ""},
		{"bad link", in.admin("POST", "/api/v1/links", `{"url":"ftp://x","redirect":303,"x":1}`), 400,
			`{"error":"invalid link","problems":{"redirect":"must be one of 301, 302, 307, 308","url":"must be an absolute http or https URL, such as https://example.com/page","x":"unknown field"}}`, "", ""},
		{"bad list query", in.admin("GET", "/api/v1/links?limit=1001&offset=x", ""), 400,
			`{"error":"invalid query","problems":{"limit":"must be an integer between 1 and 1000","offset":"must be an integer ≥ 0"}}`, "", ""},
		{"link body not JSON", in.do("POST", "/api/v1/links", in.token, "text/csv", "x"), 415, `{"error":"content type \"text/csv\" is not JSON; send application/json"}`, "", ""},
		{"link body too large", in.admin("POST", "/api/v1/links", bigLink), 413,
			fmt.Sprintf(`{"error":"request body is %d bytes; the limit is 65536"}`, len(bigLink)), "", ""},
		{"links without a token", in.do("GET", "/api/v1/links", "", "", ""), 401,
			`{"error":"missing bearer token: send Authorization: Bearer <admin token>"}`, "WWW-Authenticate", `Bearer realm="marquee"`},
		{"wrong method", in.do("PATCH", "/api/v1/ad/1", in.token, "", ""), 405,
			`{"error":"method PATCH not allowed on /api/v1/ad/{id}; allowed: DELETE, GET, HEAD, PUT"}`, "Allow", "DELETE, GET, HEAD, PUT"},
		{"event without fields", in.do("GET", "/e", "", "", ""), 400, `{"error":"invalid event","problems":{"query":"an event needs 1-64 fields, got 0"}}`, "", ""},
		{"bad beacon field", in.do("GET", "/e?id=1&a=1&a=2&b=%ff", "", "", ""), 400,
			`{"error":"invalid event","problems":{"a":"is repeated","b":"is not valid UTF-8","id":"is set by the server"}}`, "", ""},
		{"events of another type", in.do("POST", "/e", "", "text/csv", "a"), 415,
			`{"error":"content type \"text/csv\": send application/json, application/x-ndjson or text/plain"}`, "", ""},
		{"bad batch", in.do("POST", "/e", "", "application/json", `[{"type":"x"},{},{"ip":"1"},3]`), 400,
			`{"error":"invalid event","problems":{"[3]":"an event must be a JSON object"}}`, "", ""},
		{"ad title not text", in.admin("POST", "/api/v1/ad", `{"title":"\ud800","startAt":"2024-01-01T00:00:00Z","endAt":"2031-01-01T00:00:00Z"}`), 400,
			`{"error":"invalid ad","problems":{"title":"holds half a surrogate pair (a lone \\ud800-\\udfff escape): not text"}}`, "", ""},
		{"event value not text", in.do("POST", "/e", "", "application/json", `{"type":"x","v":"a\udc00"}`), 400,
			`{"error":"invalid events","problems":{"[0].v":"holds half a surrogate pair (a lone \\ud800-\\udfff escape): not text"}}`, "", ""},
		{"bad events", in.do("POST", "/e", "", "application/json", `[{"type":"x"},{},{"ip":"1"}]`), 400,
			`{"error":"invalid events","problems":{"[1]":"an event needs at least one field","[2].ip":"is set by the server"}}`, "", ""},
	} {
		if c.r.status != c.status || c.r.body != c.body {
			t.Errorf("%s: got %d %s; want %d %s", c.name, c.r.status, c.r.body, c.status, c.body)
		}
		if c.header != "" && c.r.header.Get(c.header) != c.is {
			t.Errorf("%s: %s = %q; want %q", c.name, c.header, c.r.header.Get(c.header), c.is)
		}
	}

	// The ad's tracking link changes only with the ad.
	var tl link
	for _, l := range decodeLinks(t, in.admin("GET", "/api/v1/links", "")) {
		if l.AdID != nil && *l.AdID == "1" {
			tl = l
		}
	}
	// A conflict names the write that clashed.
	want := `link \"` + tl.Code + `\" is the tracking link of ad 1; change or delete the ad"}`
	in.expect(in.admin("PUT", "/api/v1/links/"+tl.Code, `{"url":"https://x.test"}`), 409, `{"error":"replace link: `+want)
	in.expect(in.admin("DELETE", "/api/v1/links/"+tl.Code, ""), 409, `{"error":"delete link: `+want)

	// Request line and headers over 8 KiB, and a request fasthttp cannot read.
	for _, raw := range []struct{ req, want string }{
		{"GET /api/v1/ad HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 9000) + "\r\n\r\n",
			`431 {"error":"request line and headers exceed 8192 bytes"}`},
		// A header fasthttp refuses (a DEL byte in its value): the answer
		// names the problem but never echoes what was read, where the
		// next header is the session cookie.
		{"GET /api/v1/ad HTTP/1.1\r\nHost: x\r\nX-Bad: a\x7fb\r\nCookie: marquee_session=s3cret\r\nAuthorization: Bearer mq_s3cret\r\n\r\n",
			`400 {"error":"malformed request: the request line, a header or the body's framing is not valid HTTP/1.1"}`},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(conn, raw.req)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b := new(strings.Builder)
		bufio.NewReader(resp.Body).WriteTo(b)
		if got := fmt.Sprintf("%d %s", resp.StatusCode, b); got != raw.want {
			t.Errorf("%q…: got %s; want %s", raw.req[:20], got, raw.want)
		}
		conn.Close()
	}
}

// decodeLinks reads the items of an admin list of links.
func decodeLinks(t *testing.T, r response) []link {
	t.Helper()
	var page struct{ Items []link }
	if err := json.Unmarshal([]byte(r.body), &page); err != nil {
		t.Fatalf("links page %q: %v", r.body, err)
	}
	return page.Items
}
