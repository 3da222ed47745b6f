package loadgen_test

import (
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"marquee/fixture"
	"marquee/loadgen"
)

func TestAdsPathsDeterministic(t *testing.T) {
	a, b := loadgen.AdsPaths(7, 500), loadgen.AdsPaths(7, 500)
	if !slices.Equal(a, b) {
		t.Error("AdsPaths(7, 500) differs between two calls")
	}
	if slices.Equal(a, loadgen.AdsPaths(8, 500)) {
		t.Error("AdsPaths(7, 500) = AdsPaths(8, 500); want seeds to matter")
	}
}

// The ads mix is what AdsPaths documents: offset uniform 0–99, limit
// uniform 1–100, each filter present half the time with valid values.
func TestAdsPathsDistribution(t *testing.T) {
	const n = 20_000
	paths := loadgen.AdsPaths(1, n)
	present := map[string]int{}
	var offsets, limits float64
	genders := map[string]int{}
	for _, p := range paths {
		u, err := url.Parse(p)
		if err != nil || u.Path != "/api/v1/ad" {
			t.Fatalf("path %q: not a GET /api/v1/ad query", p)
		}
		q := u.Query()
		off, err1 := strconv.Atoi(q.Get("offset"))
		lim, err2 := strconv.Atoi(q.Get("limit"))
		if err1 != nil || err2 != nil || off < 0 || off > 99 || lim < 1 || lim > 100 {
			t.Fatalf("path %q: offset/limit out of 0–99/1–100", p)
		}
		offsets += float64(off)
		limits += float64(lim)
		for k := range q {
			present[k]++
		}
		if age := q.Get("age"); age != "" {
			if a, err := strconv.Atoi(age); err != nil || a < 1 || a > 100 {
				t.Fatalf("path %q: age out of 1–100", p)
			}
		}
		if g := q.Get("gender"); g != "" {
			genders[g]++
		}
		if pl := q.Get("platform"); pl != "" && pl != "android" && pl != "ios" && pl != "web" {
			t.Fatalf("path %q: unknown platform", p)
		}
		if c := q.Get("country"); c != "" && len(c) != 2 {
			t.Fatalf("path %q: country is not a 2-letter code", p)
		}
	}
	// Standard error of a proportion at n = 20,000 is 0.0035: ±0.02 is > 5σ.
	for _, k := range []string{"age", "gender", "country", "platform"} {
		if f := float64(present[k]) / n; math.Abs(f-0.5) > 0.02 {
			t.Errorf("%s present in %.3f of paths; want 0.5 ± 0.02", k, f)
		}
	}
	if m := offsets / n; math.Abs(m-49.5) > 1.5 {
		t.Errorf("mean offset = %.2f; want 49.5 ± 1.5", m)
	}
	if m := limits / n; math.Abs(m-50.5) > 1.5 {
		t.Errorf("mean limit = %.2f; want 50.5 ± 1.5", m)
	}
	if f := float64(genders["M"]) / float64(genders["M"]+genders["F"]); math.Abs(f-0.5) > 0.03 {
		t.Errorf("gender M share = %.3f; want 0.5 ± 0.03", f)
	}
}

// Ranks follow Zipf: the most popular id is asked for 1/H of the time and
// about 2^s times as often as the second.
func TestAdByIDPathsZipf(t *testing.T) {
	const n, ids, s = 200_000, 1000, 1.2
	paths, err := loadgen.AdByIDPaths(3, n, ids, s)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := loadgen.AdByIDPaths(3, n, ids, s)
	if !slices.Equal(paths, again) {
		t.Error("AdByIDPaths(3, …) differs between two calls")
	}
	count := map[int]int{}
	for _, p := range paths {
		id, err := strconv.Atoi(strings.TrimPrefix(p, "/api/v1/ad/"))
		if err != nil || id < 1 || id > ids {
			t.Fatalf("path %q: want /api/v1/ad/{1..%d}", p, ids)
		}
		count[id]++
	}
	var h float64
	for k := 1; k <= ids; k++ {
		h += math.Pow(float64(k), -s)
	}
	top, second := count[loadgen.ZipfID(0, ids)], count[loadgen.ZipfID(1, ids)]
	if want := n / h; math.Abs(float64(top)-want)/want > 0.03 {
		t.Errorf("most popular id asked %d times; want %.0f ± 3%%", top, want)
	}
	if r := float64(top) / float64(second); math.Abs(r-math.Pow(2, s))/math.Pow(2, s) > 0.05 {
		t.Errorf("rank 0 / rank 1 = %.3f; want 2^%v = %.3f ± 5%%", r, s, math.Pow(2, s))
	}
	// The hottest ids are spread over the id space, not 1, 2, 3, ….
	if loadgen.ZipfID(0, ids)+1 == loadgen.ZipfID(1, ids) {
		t.Error("ZipfID maps ranks 0 and 1 to neighbouring ids")
	}
}

func TestZipfIDIsABijection(t *testing.T) {
	for _, ids := range []int{1, 2, 10, 1000, 1 << 16, 999_983} {
		seen := make([]bool, ids+1)
		for r := range ids {
			id := loadgen.ZipfID(r, ids)
			if id < 1 || id > ids || seen[id] {
				t.Fatalf("ZipfID(%d, %d) = %d: out of range or repeated", r, ids, id)
			}
			seen[id] = true
		}
	}
}

func TestAdByIDPathsRejects(t *testing.T) {
	if _, err := loadgen.AdByIDPaths(1, 10, 0, 1.1); err == nil {
		t.Error("AdByIDPaths with 0 ids: no error")
	}
	if _, err := loadgen.AdByIDPaths(1, 10, 10, 1); err == nil {
		t.Error("AdByIDPaths with s = 1: no error")
	}
}

func TestReadPaths(t *testing.T) {
	got, err := loadgen.ReadPaths(strings.NewReader("# comment\n/a\n\n  /b?x=1  \n"))
	if err != nil || !slices.Equal(got, []string{"/a", "/b?x=1"}) {
		t.Errorf("ReadPaths = %q, %v; want [/a /b?x=1]", got, err)
	}
	for _, in := range []string{"", "# only\n", "/a\nrelative\n"} {
		if _, err := loadgen.ReadPaths(strings.NewReader(in)); err == nil {
			t.Errorf("ReadPaths(%q): no error", in)
		}
	}
}

func TestBuildRequests(t *testing.T) {
	got, err := loadgen.BuildRequests("h:1", []string{"/x?a=1"}, []string{"Authorization:  Bearer t "})
	want := "GET /x?a=1 HTTP/1.1\r\nHost: h:1\r\nAuthorization: Bearer t\r\n\r\n"
	if err != nil || len(got) != 1 || string(got[0]) != want {
		t.Errorf("BuildRequests = %q, %v; want %q", got, err, want)
	}
	for _, bad := range [][2]string{{"/a b", ""}, {"x", ""}, {"/a", "NoColon"}, {"/a", "X: a\r\nY: b"}} {
		var hdrs []string
		if bad[1] != "" {
			hdrs = []string{bad[1]}
		}
		if _, err := loadgen.BuildRequests("h", []string{bad[0]}, hdrs); err == nil {
			t.Errorf("BuildRequests(%q, %q): no error", bad[0], bad[1])
		}
	}
}

func TestHelloBodySize(t *testing.T) {
	for _, n := range []int{0, 12, 13, 100, 2741} {
		b := loadgen.HelloBody(n)
		if want := max(n, 12); len(b) != want || b[0] != '{' || b[len(b)-1] != '}' {
			t.Errorf("HelloBody(%d) = %d bytes %q…; want a %d-byte JSON object", n, len(b), b[:min(len(b), 12)], want)
		}
	}
}

func TestEventPaths(t *testing.T) {
	paths := loadgen.EventPaths(5, 5000, 1000)
	if !slices.Equal(paths, loadgen.EventPaths(5, 5000, 1000)) || slices.Equal(paths, loadgen.EventPaths(6, 5000, 1000)) {
		t.Error("EventPaths is not deterministic for a seed, or ignores it")
	}
	impressions, total := 0, 0
	for _, p := range paths {
		u, err := url.Parse(p)
		if err != nil || u.Path != "/e" || len(u.Query()) != 7 {
			t.Fatalf("path %q: want GET /e with 7 fields", p)
		}
		total += len(p)
		if u.Query().Get("type") == "impression" {
			impressions++
		}
		if ad, err := strconv.Atoi(u.Query().Get("ad")); err != nil || ad < 1 || ad > 1000 {
			t.Fatalf("path %q: want an ad id of 1-1000", p)
		}
	}
	if f := float64(impressions) / 5000; math.Abs(f-0.8) > 0.03 {
		t.Errorf("impressions = %.3f of events; want 0.8", f)
	}
	if avg := total / 5000; avg < 100 || avg > 140 {
		t.Errorf("average path = %d bytes; want ~120", avg)
	}
}

// LinkPaths asks for the seeded codes, Zipf-distributed like ad-by-id.
func TestLinkPaths(t *testing.T) {
	const n, links, s = 100_000, 500, 1.2
	paths, err := loadgen.LinkPaths(5, n, links, s)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for i := range links {
		codes["/r/"+fixture.Code(int64(i))] = 0
	}
	for _, p := range paths {
		if _, ok := codes[p]; !ok {
			t.Fatalf("path %q is not a seeded link", p)
		}
		codes[p]++
	}
	top := codes["/r/"+fixture.Code(int64(loadgen.ZipfID(0, links)-1))]
	second := codes["/r/"+fixture.Code(int64(loadgen.ZipfID(1, links)-1))]
	if r := float64(top) / float64(second); math.Abs(r-math.Pow(2, s))/math.Pow(2, s) > 0.05 {
		t.Errorf("rank 0 / rank 1 = %.3f; want 2^%v ± 5%%", r, s)
	}
}

// The decisions scenario posts three slots of three placements with a
// user key, and BuildRequests sends a POST with its JSON body, type and
// length.
func TestDecisionRequests(t *testing.T) {
	paths := loadgen.DecisionPaths(1, 200, 0, "", 0, 0)
	for _, p := range paths {
		rest, ok := strings.CutPrefix(p, loadgen.PostPrefix+"/api/v1/decisions\n")
		var body struct {
			Placements []struct{ Div, Placement string }
			User       struct{ Key string }
		}
		if !ok || json.Unmarshal([]byte(rest), &body) != nil || len(body.Placements) != 3 || body.User.Key == "" {
			t.Fatalf("request %q: want a POST of three slots and a user key", p)
		}
		if a, b, c := body.Placements[0].Placement, body.Placements[1].Placement, body.Placements[2].Placement; a == b || b == c || a == c {
			t.Fatalf("request %q: three slots of one placement twice", p)
		}
	}
	// With bids: each slot carries as many.
	for _, p := range loadgen.DecisionPaths(1, 50, 0, "", 0, 5) {
		_, rest, _ := strings.Cut(p, "\n")
		var body struct {
			Placements []struct {
				Bids []struct {
					Bidder, AdID string
					CPM          float64
				}
			}
		}
		if json.Unmarshal([]byte(rest), &body) != nil || len(body.Placements) != 3 || len(body.Placements[0].Bids) != 5 || body.Placements[0].Bids[0].Bidder == "" ||
			body.Placements[0].Bids[0].CPM <= 0 || body.Placements[0].Bids[0].AdID == "" {
			t.Fatalf("request %q: want five bids a slot", p)
		}
	}
	reqs, err := loadgen.BuildRequests("h:1", paths[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(paths[0], "\n")
	want := "POST /api/v1/decisions HTTP/1.1\r\nHost: h:1\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if string(reqs[0]) != want {
		t.Errorf("BuildRequests = %q; want %q", reqs[0], want)
	}
}
