package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marquee/collector"
)

// eventLines decodes every event file under data (recovering interrupted
// ones first, as the next start would) into parsed JSON objects; it fails
// the test on any line that is not a JSON object.
func eventLines(t *testing.T, data string) []map[string]any {
	t.Helper()
	dir := filepath.Join(data, "events")
	c, err := collector.New(collector.Config{Dir: dir, Instance: "check"}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
	var out []map[string]any
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var buf bytes.Buffer
		if err := catFile(p, &buf); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: a line is not a JSON object (%v): %q", p, err, sc.Text())
			}
			out = append(out, m)
		}
		return nil
	})
	return out
}

func post(in *instance, contentType, body string) response {
	return in.do("POST", "/e", "", contentType, body)
}

// Hostile input is either refused with a clear 4xx naming the problem, or
// stored as valid JSON holding exactly what was sent.
func TestEventsHostileInput(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil, "-insecure-admin")
	tricky := "q\"uote \\back\\slash\x01ctl\ttab\nnl </script> \u2028 ü 😀"
	for _, c := range []struct {
		name, method, path, ctype, body string
		status                          int
		inError                         string
	}{
		{"tricky GET value", "GET", "/e?case=get&v=" + url.QueryEscape(tricky), "", "", 204, ""},
		{"tricky POST value", "POST", "/e", "application/json", `{"case":"post","v":` + mustJSON(tricky) + `,"obj":{"a":[1,"\u0000",null]}}`, 202, ""},
		{"invalid UTF-8 in GET", "GET", "/e?v=%FF%FE", "", "", 400, "UTF-8"},
		{"invalid UTF-8 in POST", "POST", "/e", "application/json", "{\"v\":\"\xff\"}", 400, "UTF-8"},
		{"raw control character in POST", "POST", "/e", "application/json", "{\"v\":\"a\x01b\"}", 400, "malformed JSON"},
		{"huge value", "GET", "/e?v=" + strings.Repeat("x", 3000), "", "", 400, "at most 2048 bytes"},
		{"huge key", "GET", "/e?" + strings.Repeat("k", 100) + "=1", "", "", 400, "1-64 bytes"},
		{"key with a quote", "GET", "/e?a%22b=1", "", "", 400, "field names"},
		{"reserved key", "POST", "/e", "application/json", `{"id":"mine"}`, 400, "set by the server"},
		{"repeated key", "GET", "/e?a=1&a=2", "", "", 400, "repeated"},
		{"no fields", "GET", "/e", "", "", 400, "1-64 fields"},
		{"65 fields", "GET", "/e?" + params(65), "", "", 400, "1-64 fields"},
		{"10,000 parameters", "GET", "/e?" + params(10_000), "", "", 431, "exceed"},
		{"10,000 fields posted", "POST", "/e", "application/json", "{" + fields(10_000) + "}", 400, "at most 64 fields"},
		{"nested 9 deep", "POST", "/e", "application/json", `{"v":` + strings.Repeat("[", 9) + strings.Repeat("]", 9) + `}`, 400, "deeper than 8"},
		{"nested 100,000 deep", "POST", "/e", "application/json", `{"v":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`, 400, ""},
		{"not an object", "POST", "/e", "application/json", `[1]`, 400, "JSON object"},
		{"truncated", "POST", "/e", "application/json", `{"a":`, 400, "malformed"},
		{"501 events", "POST", "/e", "application/x-ndjson", strings.Repeat("{\"a\":1}\n", 501), 413, "500"},
		{"HTML", "POST", "/e", "text/html", `{"a":1}`, 415, "content type"},
		{"one bad event spoils the batch", "POST", "/e", "application/json", `[{"case":"batch","ok":1},{"ok":"\u0000","bad key":1}]`, 400, "[1].bad key"},
	} {
		var r response
		if c.method == "GET" {
			r = in.do("GET", c.path, "", "", "")
		} else {
			r = post(in, c.ctype, c.body)
		}
		if r.status != c.status || !strings.Contains(r.body, c.inError) {
			t.Errorf("%s: %d %.200s; want %d mentioning %q", c.name, r.status, r.body, c.status, c.inError)
		}
	}
	// A body over 1 MiB is refused from its headers, before it is read (a
	// client still sending it may see the connection closed after the 413,
	// so this one sends the headers only).
	conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /e HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 1<<20+1)
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != 413 {
		t.Errorf("body over 1 MiB: %v, %v; want 413", resp, err)
	}
	conn.Close()
	in.stop()
	lines := eventLines(t, data)
	if len(lines) != 2 {
		t.Fatalf("%d events stored; want the 2 accepted", len(lines))
	}
	for _, l := range lines {
		if l["v"] != tricky {
			t.Errorf("stored %q; want %q", l["v"], tricky)
		}
		for _, k := range []string{"receivedAt", "id", "ip", "ua"} {
			if _, ok := l[k].(string); !ok {
				t.Errorf("event lacks %s: %v", k, l)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, l["receivedAt"].(string)); err != nil || len(l["receivedAt"].(string)) != 30 {
			t.Errorf("receivedAt %q: want RFC 3339 with nanoseconds", l["receivedAt"])
		}
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func params(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d=%d&", i, i)
	}
	return strings.TrimSuffix(b.String(), "&")
}

func fields(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	return strings.TrimSuffix(b.String(), ",")
}

// Concurrent clients, GET and POST: after shutdown the files hold every
// accepted event once, with exactly its client fields.
func TestEventsExactlyWhatWasSent(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	in := start(t, data, nil, "-insecure-admin", "-events-rotate-mb", "1")
	var mu sync.Mutex
	want := map[string]map[string]any{}
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for i := range 150 {
				key := fmt.Sprintf("%d-%d", c, i)
				v := fmt.Sprintf("v\"%d\\%s", i, strings.Repeat("é", i%7))
				if i%3 == 0 { // a batch of three
					var lines []string
					batch := map[string]map[string]any{}
					for j := range 3 {
						k := fmt.Sprintf("%s-%d", key, j)
						ev := map[string]any{"key": k, "v": v, "n": float64(j), "tags": []any{"a", "b"}}
						b, _ := json.Marshal(ev)
						lines = append(lines, string(b))
						batch[k] = ev
					}
					if r := post(in, "application/x-ndjson", strings.Join(lines, "\n")); r.status != 202 {
						t.Errorf("POST: %d %s", r.status, r.body)
						return
					}
					mu.Lock()
					for k, ev := range batch {
						want[k] = ev
					}
					mu.Unlock()
					continue
				}
				if r := in.do("GET", "/e?key="+key+"&v="+url.QueryEscape(v), "", "", ""); r.status != 204 {
					t.Errorf("GET: %d %s", r.status, r.body)
					return
				}
				mu.Lock()
				want[key] = map[string]any{"key": key, "v": v}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	in.stop()
	got := map[string]map[string]any{}
	for _, l := range eventLines(t, data) {
		k := l["key"].(string)
		if _, dup := got[k]; dup {
			t.Fatalf("event %s stored twice", k)
		}
		for _, s := range []string{"receivedAt", "id", "ip", "ua"} {
			delete(l, s)
		}
		got[k] = l
	}
	if len(got) != len(want) {
		t.Fatalf("%d events stored; want %d", len(got), len(want))
	}
	for k, w := range want {
		if mustJSON(got[k]) != mustJSON(w) {
			t.Fatalf("event %s stored as %s; want %s", k, mustJSON(got[k]), mustJSON(w))
		}
	}
}

// With -events-durable, every event acknowledged before the process is
// killed with SIGKILL is in the files afterwards.
func TestEventsDurableSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a child process")
	}
	data := t.TempDir()
	base, cmd := startChild(t, data, "-events-durable")
	var mu sync.Mutex
	var acked []string
	var n atomic.Int64
	client := &http.Client{Timeout: 5 * time.Second}
	killUnderLoad(cmd, 700*time.Millisecond, func() bool {
		k := fmt.Sprintf("e%d", n.Add(1))
		resp, err := client.Post(base+"/e", "application/json", strings.NewReader(`{"key":"`+k+`","pad":"`+strings.Repeat("p", 100)+`"}`))
		if err != nil {
			return false // killed
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 202 {
			mu.Lock()
			acked = append(acked, k)
			mu.Unlock()
		}
		return true
	})
	stored := map[string]bool{}
	for _, l := range eventLines(t, data) {
		stored[l["key"].(string)] = true
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acked) < 100 {
		t.Fatalf("only %d events acknowledged before the kill; the test needs load", len(acked))
	}
	for _, k := range acked {
		if !stored[k] {
			t.Fatalf("event %s was acknowledged but is not in the files after SIGKILL (%d acked, %d stored)", k, len(acked), len(stored))
		}
	}
}

// A spool that cannot ship (its S3 is unreachable) fills up, and then new
// events get 503 with Retry-After.
func TestEventsSpoolFullIs503(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-insecure-admin", "-events-codec", "none", "-events-rotate-mb", "1",
		"-events-spool-max-mb", "1", "-events-s3", "s3://bucket/p", "-events-s3-endpoint", "127.0.0.1:1", "-events-s3-insecure")
	line := `{"pad":"` + strings.Repeat("r", 1900) + `"}` + "\n"
	batch := strings.Repeat(line, 500) // ~1 MB: one full file
	var r response
	for range 10 {
		if r = post(in, "application/x-ndjson", batch); r.status == 503 {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if r.status != 503 || r.header.Get("Retry-After") != "1" || r.body != `{"error":"overloaded: the event spool is full; retry later"}` {
		t.Fatalf("POST to a full spool = %d %s; want 503 with Retry-After", r.status, r.body)
	}
	if m := in.do("GET", "/metrics", "", "", "").body; !strings.Contains(m, `marquee_events_rejected_total{reason="spool full"}`) {
		t.Error("/metrics does not count the rejected events")
	}
}

func TestEventsCatCommand(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	c, err := collector.New(collector.Config{Dir: filepath.Join(data, "events"), Instance: "cat", Codec: "zstd"},
		slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Append(0, []byte("{\"a\":1}\n{\"b\":\"ü\"}\n"), 2)
	c.Close(context.Background())
	matches, _ := filepath.Glob(filepath.Join(data, "events", "dt=*", "hour=*", "cat-*.ndjson.zst"))
	if len(matches) != 1 {
		t.Fatalf("files %v; want one zstd file", matches)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"events", "cat", matches[0]}, nil, nil, &out, io.Discard); err != nil || out.String() != "{\"a\":1}\n{\"b\":\"ü\"}\n" {
		t.Errorf("events cat = %q, %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"events", "cat"}, nil, nil, &out, io.Discard); err == nil {
		t.Error("events cat without files: no error")
	}
}

// X-Forwarded-For is believed only from -trusted-proxies: the event's ip
// is the nearest hop that is not trusted (seen whole with -privacy off;
// the default truncates it: TestPrivacyModesEveryPath). A client that
// accepts only images gets a 1×1 GIF; sendBeacon's text/plain is read as
// JSON.
func TestEventsClientIPPixelAndBeacon(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		trusted, want string
	}{
		{"", "127.0.0.1"},
		{"127.0.0.1", "10.0.0.1"},
		{"127.0.0.0/8,10.0.0.0/8", "203.0.113.9"},
	} {
		data := t.TempDir()
		flags := []string{"-insecure-admin", "-privacy", "off"}
		if c.trusted != "" {
			flags = append(flags, "-trusted-proxies", c.trusted)
		}
		in := start(t, data, nil, flags...)
		req, _ := http.NewRequest("GET", in.url+"/e?who=x", nil)
		req.Header.Set("X-Forwarded-For", "203.0.113.9, 10.0.0.1")
		req.Header.Set("Accept", "image/avif,image/webp,image/*;q=0.8")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/gif" || len(body) != 43 || !bytes.HasPrefix(body, []byte("GIF89a")) {
			t.Errorf("pixel: %d %s, %d bytes; want a 43-byte GIF", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		if r := post(in, "text/plain;charset=UTF-8", `{"who":"beacon"}`); r.status != 202 {
			t.Errorf("sendBeacon-style POST: %d %s", r.status, r.body)
		}
		in.stop()
		lines := eventLines(t, data)
		if len(lines) != 2 {
			t.Fatalf("%d events; want 2", len(lines))
		}
		for _, l := range lines {
			if l["who"] == "x" && l["ip"] != c.want {
				t.Errorf("-trusted-proxies %q: ip = %v; want %s", c.trusted, l["ip"], c.want)
			}
		}
	}
}
