package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// importJob is the answer of an import, read as a client would.
type importJob struct {
	ID, Status, Format, Error string
	Rows, Valid               int
	Done                      int
	Created, Updated          int
	Unchanged, Skipped        int
	Problems                  map[string]string
	IgnoredColumns            []string
}

func decodeJob(t testing.TB, r response) importJob {
	t.Helper()
	var j importJob
	if err := json.Unmarshal([]byte(r.body), &j); err != nil {
		t.Fatalf("import answer %q: %v", r.body, err)
	}
	return j
}

// waitJob polls an import's job until it has finished.
func (in *instance) waitJob(id string) importJob {
	in.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j := decodeJob(in.t, in.admin("GET", "/api/v1/links/import/"+id, ""))
		if j.Status != "running" {
			return j
		}
		if time.Now().After(deadline) {
			in.t.Fatalf("import %s still running: %+v", id, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A Shlink export: a dry run names every bad row by number and writes
// nothing; the file with bad rows is refused whole; partial=true imports
// the rest through a job; the same file again changes nothing; the
// export reads back into a fresh server as the same links, which then
// redirect.
func TestLinkImportAndExport(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-link-domains", "go.brand.example")
	shlink := "createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits\n" +
		"2024-01-02T03:04:05+00:00,s.test,abc,https://s.test/abc,https://example.com/1,First,promo|Spring,12\n" +
		"2024-01-02T03:04:05+00:00,s.test,bad1,https://s.test/bad1,ftp://example.com/2,,,0\n" +
		"2024-01-02T03:04:05+00:00,s.test,api,https://s.test/api,https://example.com/3,,,0\n" +
		"2024-01-02T03:04:05+00:00,s.test,ok2,https://s.test/ok2,https://example.com/4,,,0\n"
	csv := func(method, path, body string) response { return in.do(method, path, in.token, "text/csv", body) }
	dry := decodeJob(t, csv("POST", "/api/v1/links/import?dryRun=true", shlink))
	if dry.Format != "shlink" || dry.Rows != 4 || dry.Valid != 2 || dry.Created != 2 || !strings.Contains(dry.Problems["row 3: url"], "http or https") ||
		!strings.Contains(dry.Problems["row 4: code"], "reserved") || len(dry.IgnoredColumns) != 3 {
		t.Fatalf("dry run = %+v; want shlink, 4 rows, 2 to create, rows 3 and 4 named", dry)
	}
	if r := in.admin("GET", "/api/v1/links", ""); !strings.Contains(r.body, `"total":0`) {
		t.Fatalf("after a dry run, the links = %s; want none", r.body)
	}
	r := csv("POST", "/api/v1/links/import", shlink)
	if r.status != 400 || !strings.Contains(r.body, "nothing was imported") || !strings.Contains(r.body, "row 3: url") {
		t.Fatalf("an import with bad rows = %d %s; want 400, nothing imported, the rows named", r.status, r.body)
	}
	r = csv("POST", "/api/v1/links/import?partial=true", shlink)
	if r.status != 202 || r.header.Get("Location") != "/api/v1/links/import/"+decodeJob(t, r).ID {
		t.Fatalf("a partial import = %d %s (Location %q); want 202 and the job", r.status, r.body, r.header.Get("Location"))
	}
	job := in.waitJob(decodeJob(t, r).ID)
	if job.Status != "done" || job.Created != 2 || job.Done != 2 {
		t.Fatalf("the import's job = %+v; want done, 2 created", job)
	}
	if l := decodeLink(t, in.admin("GET", "/api/v1/links/abc", "")); l.URL != "https://example.com/1" || l.Title != "First" || strings.Join(l.Tags, ",") != "promo,spring" {
		t.Errorf("imported link abc = %+v", l)
	}
	again := in.waitJob(decodeJob(t, csv("POST", "/api/v1/links/import?partial=true", shlink)).ID)
	if again.Unchanged != 2 || again.Created+again.Updated != 0 {
		t.Errorf("the same import again = %+v; want 2 unchanged (idempotent by code)", again)
	}
	// Bad input of the route itself.
	for _, c := range []struct {
		path, ctype, body string
		status            int
		want              string
	}{
		{"/api/v1/links/import", "application/json", `{}`, 415, "not CSV"},
		{"/api/v1/links/import", "text/csv", "title\nx\n", 400, "no url column"},
		{"/api/v1/links/import?dryRun=maybe", "text/csv", shlink, 400, "dryRun"},
		{"/api/v1/links/import?existing=merge", "text/csv", shlink, 400, "existing"},
		{"/api/v1/links/import?domain=elsewhere.example", "text/csv", shlink, 400, "not one of this server's link domains"},
		{"/api/v1/links/import/nope", "", "", 404, "no import"},
	} {
		method := "POST"
		if c.body == "" {
			method = "GET"
		}
		if r := in.do(method, c.path, in.token, c.ctype, c.body); r.status != c.status || !strings.Contains(r.body, c.want) {
			t.Errorf("%s %s = %d %s; want %d …%s…", method, c.path, r.status, r.body, c.status, c.want)
		}
	}
	if r := in.do("POST", "/api/v1/links/import", "", "text/csv", shlink); r.status != 401 {
		t.Errorf("an import without a credential = %d; want 401", r.status)
	}
	big := "code,url\n" + strings.Repeat("x,https://example.com/\n", 60_000) // 1.3 MB
	// Without a credential the 1 MiB limit of every route holds, from the
	// headers (so this sends the headers only).
	conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/v1/links/import HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n", len(big))
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != 413 {
		t.Errorf("1.3 MB without a credential: %v, %v; want 413 (the larger limit needs a credential)", resp, err)
	}
	conn.Close()
	if r := csv("POST", "/api/v1/links/import?dryRun=true", big); r.status != 200 || !strings.Contains(r.body, "repeats row 2") {
		t.Errorf("1.3 MB with the token = %d %.200s; want 200 and every repeated code named", r.status, r.body)
	}
	// On a domain, then the export, read back into another server.
	in.waitJob(decodeJob(t, csv("POST", "/api/v1/links/import?domain=go.brand.example", "code,url,tags\nabc,https://brand.example/,x\n")).ID)
	exp := in.admin("GET", "/api/v1/links/export", "")
	if exp.status != 200 || !strings.HasPrefix(exp.header.Get("Content-Type"), "text/csv") || strings.Count(exp.body, "\n") != 4 ||
		!strings.Contains(exp.body, "abc,https://brand.example/,,x,go.brand.example,,,302") {
		t.Fatalf("GET /api/v1/links/export = %d %q", exp.status, exp.body)
	}
	other := start(t, t.TempDir(), nil, "-link-domains", "go.brand.example")
	job = other.waitJob(decodeJob(t, other.do("POST", "/api/v1/links/import", other.token, "text/csv", exp.body)).ID)
	if job.Format != "marquee" || job.Created != 3 {
		t.Fatalf("the export imported elsewhere = %+v; want 3 created", job)
	}
	if r := other.follow("GET", "abc", "Host", "go.brand.example"); r.header.Get("Location") != "https://brand.example/" {
		t.Errorf("GET /r/abc on go.brand.example after the import = %d %q", r.status, r.header.Get("Location"))
	}
	if r := other.follow("GET", "abc"); r.header.Get("Location") != "https://example.com/1" {
		t.Errorf("GET /r/abc after the import = %d %q", r.status, r.header.Get("Location"))
	}
}

// marquee links import and export work on the store directly.
func TestLinksCommand(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	file := filepath.Join(t.TempDir(), "yourls.csv")
	var rows strings.Builder
	rows.WriteString("keyword,url,title,timestamp,ip,clicks\n")
	for i := range 500 {
		fmt.Fprintf(&rows, "k%d,https://example.com/%d,Title %d,2020-01-01 00:00:00,127.0.0.1,%d\n", i, i, i, i)
	}
	os.WriteFile(file, []byte(rows.String()), 0o600)
	out, errOut, err := runCLI(t, "", "links", "import", "-data", data, "-dry-run", file)
	if err != nil || !strings.Contains(out, "would import (dry run) 500 links") || !strings.Contains(out, `"created":500`) || !strings.Contains(errOut, "yourls's format") {
		t.Fatalf("links import -dry-run = %v\n%s\n%s", err, out, errOut)
	}
	out, errOut, err = runCLI(t, "", "links", "import", "-data", data, file)
	if err != nil || !strings.Contains(out, `"created":500`) {
		t.Fatalf("links import = %v\n%s\n%s", err, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("code,url\nfine,https://example.com/\nnope,mailto:x@example.com\n"), 0o600)
	if _, errOut, err := runCLI(t, "", "links", "import", "-data", data, bad); err == nil || !strings.Contains(errOut, "row 3: url") {
		t.Fatalf("links import of a bad row = %v, %s; want an error naming row 3", err, errOut)
	}
	out, _, err = runCLI(t, "", "links", "export", "-data", data, "-q", "k49")
	if err != nil || !strings.HasPrefix(out, "code,url,title,tags,domain,expiresAt,maxClicks,redirect\n") || !strings.Contains(out, "k49,https://example.com/49,Title 49,,,,,302") {
		t.Fatalf("links export -q k49 = %v, %q", err, out)
	}
	if _, _, err := runCLI(t, "", "links", "import", "-data", data); err == nil {
		t.Error("links import without a file: want an error")
	}
}

// The import route's larger body is for a valid credential that may
// import: a made-up token, or a key without links:write, meets the 1 MiB
// limit of every route (413, the body never read past it), and the owner's
// token imports the same 2 MiB file.
func TestImportLimitNeedsCredential(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	var csv strings.Builder
	csv.WriteString("url,code\n")
	for i := 0; csv.Len() < 2<<20; i++ {
		fmt.Fprintf(&csv, "https://example.com/%s,c%07d\n", strings.Repeat("p", 60), i)
	}
	body := csv.String()
	r := in.admin("POST", "/api/v1/keys", `{"name":"reader","scopes":["links:read"]}`)
	var key struct{ Key string }
	if err := json.Unmarshal([]byte(r.body), &key); err != nil || key.Key == "" {
		t.Fatalf("POST /api/v1/keys = %d %s", r.status, r.body)
	}
	// The refusals are sent as headers alone: the answer must come before
	// any of the body (a client writing the whole body could instead meet
	// the reset of a server that refused it, which proves nothing).
	for _, token := range []string{"not-a-token", key.Key} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(in.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /api/v1/links/import?dryRun=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n", token, len(body))
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil || resp.StatusCode != 413 {
			t.Fatalf("headers of a 2 MiB import with token %.10q: %v, %v; want 413 before the body is read", token, resp, err)
		}
	}
	if r := in.do("POST", "/api/v1/links/import?dryRun=true", in.token, "text/csv", body); r.status != 200 {
		t.Fatalf("import of 2 MiB with the owner's token = %d %.300s; want 200", r.status, r.body)
	}
}

// A file of many bad rows answers the problems of the first
// MaxImportProblems of them and how many there are, in a dry run and in
// the refusal of the whole file.
func TestImportProblemsBounded(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	var csv strings.Builder
	csv.WriteString("url,code\n")
	for i := range 1500 {
		fmt.Fprintf(&csv, "ftp://example.com/,c%05d\n", i)
	}
	r := in.do("POST", "/api/v1/links/import?dryRun=true", in.token, "text/csv", csv.String())
	var job struct {
		Problems    map[string]string
		ProblemRows int
	}
	if err := json.Unmarshal([]byte(r.body), &job); err != nil || r.status != 200 {
		t.Fatalf("dry run = %d %.300s", r.status, r.body)
	}
	if len(job.Problems) != 1000 || job.ProblemRows != 1500 || job.Problems["row 2: url"] == "" || job.Problems["row 1002: url"] != "" {
		t.Fatalf("dry run named %d problems of %d rows (row 2: %q, row 1002: %q); want the first 1000 of 1500",
			len(job.Problems), job.ProblemRows, job.Problems["row 2: url"], job.Problems["row 1002: url"])
	}
	r = in.do("POST", "/api/v1/links/import", in.token, "text/csv", csv.String())
	var refusal struct{ Problems map[string]string }
	json.Unmarshal([]byte(r.body), &refusal)
	if r.status != 400 || len(refusal.Problems) != 1000 {
		t.Fatalf("import of 1500 bad rows = %d with %d problems; want 400 naming 1000", r.status, len(refusal.Problems))
	}
}
