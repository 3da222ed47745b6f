package loadgen

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"marquee"
	"marquee/fixture"
)

// AdsPaths returns n requests of the "ads" scenario: the mixed GET
// /api/v1/ad query of the ad-serving issue. Each has an offset uniform in
// 0–99 and a limit uniform in 1–100, and each of age (1–100), gender (M/F),
// country (20 common codes) and platform (android/ios/web) is present with
// probability 1/2, uniform over its values. The same seed gives the same
// paths.
func AdsPaths(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 0xad5))
	genders := []string{"M", "F"}
	platforms := marquee.Platforms
	out := make([]string, n)
	var b strings.Builder
	for i := range out {
		b.Reset()
		fmt.Fprintf(&b, "/api/v1/ad?offset=%d&limit=%d", r.IntN(100), 1+r.IntN(100))
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, "&age=%d", 1+r.IntN(100))
		}
		if r.IntN(2) == 0 {
			b.WriteString("&gender=" + genders[r.IntN(len(genders))])
		}
		if r.IntN(2) == 0 {
			b.WriteString("&country=" + fixture.Countries[r.IntN(len(fixture.Countries))])
		}
		if r.IntN(2) == 0 {
			b.WriteString("&platform=" + platforms[r.IntN(len(platforms))])
		}
		out[i] = b.String()
	}
	return out
}

// EventPaths returns n requests of the "events" scenario: GET /e beacons
// of ~120 bytes like an ad integration sends — type (impression 80%,
// click, view), ad id (1–ads: the ads reports count), campaign,
// placement, country, platform and a user id (one of 100,000: reach) —
// each answered 204. The same seed gives the same paths.
func EventPaths(seed uint64, n, ads int) []string {
	r := rand.New(rand.NewPCG(seed, 0xe7))
	types := []string{"impression", "impression", "impression", "impression", "impression", "impression", "impression", "impression", "click", "view"}
	campaigns := []string{"summer-sale", "black-friday", "new-arrivals", "brand-2026", "retarget-cart", "app-install"}
	placements := []string{"home-top", "home-feed", "search-side", "article-inline", "checkout"}
	platforms := marquee.Platforms
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("/e?type=%s&ad=%d&campaign=%s&placement=%s&country=%s&platform=%s&uid=u%06d",
			types[r.IntN(len(types))], 1+r.IntN(max(ads, 1)), campaigns[r.IntN(len(campaigns))], placements[r.IntN(len(placements))],
			fixture.Countries[r.IntN(len(fixture.Countries))], platforms[r.IntN(len(platforms))], r.IntN(100_000))
	}
	return out
}

// DecisionPaths returns n requests of the "decisions" scenario: POST
// /api/v1/decisions for three slots — three different placements of
// fixture.Placements (not the video one) — with a user key (one of users;
// 100,000 by default, 1: one user who soon reaches every cap), and a
// country and a platform each present half the time, over a catalog
// seeded with marquee seed -campaigns. With targeting "rules" or "none"
// each request also names key-values (a section, a position — below the
// fold a quarter of the time —, a score) and a region, which the trees of
// marquee seed -targeting rules read ("none": the same requests for
// campaigns without trees); with "sections", the section of one of
// campaigns (seed -targeting sections). With bids > 0, each slot carries
// that many header-bidding bids (bidders of a fixed list, CPMs from 0.10
// to 5.00, the placement's first size). The same seed gives the same
// requests.
func DecisionPaths(seed uint64, n, users int, targeting string, campaigns, bids int) []string {
	users = cmp.Or(max(users, 0), 100_000)
	r := rand.New(rand.NewPCG(seed, 0xdec))
	places := fixture.Placements[:len(fixture.Placements)-1]
	out := make([]string, n)
	var b strings.Builder
	for i := range out {
		b.Reset()
		b.WriteString(PostPrefix + "/api/v1/decisions\n" + `{"placements":[`)
		for k, j := range r.Perm(len(places))[:3] {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"div":"s%d","placement":%q`, k, places[j].Name)
			for x := range bids {
				if x == 0 {
					b.WriteString(`,"bids":[`)
				} else {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"bidder":%q,"cpm":%.2f,"adId":"%x"`, bidders[x%len(bidders)], 0.1+4.9*r.Float64(), r.Uint64())
				if len(places[j].Sizes) > 0 {
					fmt.Fprintf(&b, `,"size":%q`, places[j].Sizes[0])
				}
				b.WriteByte('}')
			}
			if bids > 0 {
				b.WriteByte(']')
			}
			b.WriteByte('}')
		}
		fmt.Fprintf(&b, `],"user":{"key":"u%06d"}`, r.IntN(users))
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, `,"country":%q`, fixture.Countries[r.IntN(len(fixture.Countries))])
		}
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, `,"platform":%q`, marquee.Platforms[r.IntN(len(marquee.Platforms))])
		}
		switch targeting {
		case fixture.TargetingRules, "none":
			pos := "atf"
			if r.IntN(4) == 0 {
				pos = "btf"
			}
			fmt.Fprintf(&b, `,"kv":{"section":%q,"pos":%q,"score":%d},"region":%q`, fixture.Sections[r.IntN(len(fixture.Sections))], pos,
				r.IntN(10), fixture.Regions[r.IntN(len(fixture.Regions))])
		case fixture.TargetingSections:
			fmt.Fprintf(&b, `,"kv":{"section":"s%d"}`, 1+r.IntN(max(campaigns, 1)))
		}
		b.WriteByte('}')
		out[i] = b.String()
	}
	return out
}

// bidders are the decisions scenario's bidders.
var bidders = []string{"appnexus", "rubicon", "ix", "pubmatic", "openx", "criteo", "sovrn", "triplelift"}

// VASTPaths returns n requests of the "vast" scenario: GET /vast for the
// video placement of fixture.Placements, with a user key (one of users,
// 100,000 by default) and a country and a platform each present half the
// time, over a catalog seeded with marquee seed -campaigns (every tenth ad
// a video). The same seed gives the same paths.
func VASTPaths(seed uint64, n, users int) []string {
	users = cmp.Or(max(users, 0), 100_000)
	r := rand.New(rand.NewPCG(seed, 0x7a57))
	video := fixture.Placements[len(fixture.Placements)-1].Name
	out := make([]string, n)
	for i := range out {
		p := fmt.Sprintf("/vast?placement=%s&user=u%06d", video, r.IntN(users))
		if r.IntN(2) == 0 {
			p += "&country=" + fixture.Countries[r.IntN(len(fixture.Countries))]
		}
		if r.IntN(2) == 0 {
			p += "&platform=" + marquee.Platforms[r.IntN(len(marquee.Platforms))]
		}
		out[i] = p
	}
	return out
}

// AdByIDPaths returns n requests of the "ad-by-id" scenario: GET
// /api/v1/ad/{id} over ids 1–ids, drawn from a Zipf distribution with
// exponent s (see zipfPaths). The same seed gives the same paths.
func AdByIDPaths(seed uint64, n, ids int, s float64) ([]string, error) {
	return zipfPaths(seed, 0x1d, n, ids, s, func(id int) string { return "/api/v1/ad/" + strconv.Itoa(id) })
}

// LinkPaths returns n requests of the "links" scenario: GET /r/{code}
// over the links `marquee seed -links` makes (codes fixture.Code(0) to
// fixture.Code(links-1)), drawn from a Zipf distribution with exponent s (see
// zipfPaths). The same seed gives the same paths.
func LinkPaths(seed uint64, n, links int, s float64) ([]string, error) {
	return zipfPaths(seed, 0x2d, n, links, s, func(id int) string { return "/r/" + fixture.Code(int64(id-1)) })
}

// zipfPaths draws n keys from 1–keys with a Zipf distribution of exponent
// s (> 1; math/rand's Zipf): the k-th most popular key (k from 0) is asked
// for with probability ∝ (k+1)^-s. Popularity is spread over the key space
// by ZipfID, so hot keys are not simply the oldest. path formats a key.
func zipfPaths(seed, stream uint64, n, keys int, s float64, path func(key int) string) ([]string, error) {
	if keys < 1 {
		return nil, fmt.Errorf("a keyed scenario needs at least one key, got %d", keys)
	}
	if s <= 1 {
		return nil, fmt.Errorf("zipf exponent must be > 1, got %v", s)
	}
	r := rand.New(rand.NewPCG(seed, stream))
	z := rand.NewZipf(r, s, 1, uint64(keys-1))
	out := make([]string, n)
	for i := range out {
		out[i] = path(ZipfID(int(z.Uint64()), keys))
	}
	return out, nil
}

// ZipfID maps a popularity rank (0 = most popular) to an id in 1–ids, one
// to one: rank·stride mod ids with a stride coprime to ids, so neighbouring
// ranks land far apart.
func ZipfID(rank, ids int) int {
	stride := 2654435761 % ids
	for gcd(stride, ids) != 1 {
		stride++
	}
	return 1 + int(uint64(rank)*uint64(stride)%uint64(ids))
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ReadPaths reads one path a line (blank lines and lines starting with #
// skipped) for the "url" scenario. Every path must start with "/".
func ReadPaths(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		p := strings.TrimSpace(sc.Text())
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		if !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("line %d: path %q does not start with /", line, p)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no paths")
	}
	return out, nil
}

// BuildRequests pre-builds one HTTP/1.1 GET request per path, with the
// Host header and extra headers ("Name: value") given, so that sending a
// request is one write of bytes that already exist.
func BuildRequests(host string, paths, headers []string) ([][]byte, error) {
	var extra strings.Builder
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(h, "\r\n") {
			return nil, fmt.Errorf("header %q: want \"Name: value\"", h)
		}
		extra.WriteString(strings.TrimSpace(name) + ": " + strings.TrimSpace(value) + "\r\n")
	}
	out := make([][]byte, len(paths))
	for i, p := range paths {
		method, body := "GET", ""
		if rest, ok := strings.CutPrefix(p, PostPrefix); ok {
			method = "POST"
			p, body, _ = strings.Cut(rest, "\n")
		}
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, " \r\n") {
			return nil, fmt.Errorf("path %q: want an absolute path without spaces", p)
		}
		req := method + " " + p + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra.String()
		if method == "POST" {
			req += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
		}
		out[i] = []byte(req + "\r\n" + body)
	}
	return out, nil
}

// PostPrefix marks a request of a scenario that is a POST: "POST /path\n"
// then its JSON body (BuildRequests sends it with its Content-Type and
// Content-Length).
const PostPrefix = "POST "
