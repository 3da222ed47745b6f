package ivt_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/counters"
	"marquee/ivt"
	"marquee/third_party/ivtlists"
)

// lines reads a corpus: one entry a line, # comments and blank lines
// left out.
func lines(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// crawlerInstances are the example User-Agents crawler-user-agents keeps
// for its patterns: the recall corpus.
func crawlerInstances(t testing.TB) []string {
	var list []struct {
		Instances []string `json:"instances"`
	}
	if err := json.Unmarshal(ivtlists.CrawlerUserAgents, &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list {
		out = append(out, c.Instances...)
	}
	return out
}

// TestRecallAndFalsePositives measures the classifier against the
// corpora: at least 99% of known crawlers' User-Agents flagged, at most
// 0.1% of real browsers' (a current browser list, and in-app browsers).
// It also measures each vendored list alone against the other's
// examples: how well a list catches crawlers it was not written from.
func TestRecallAndFalsePositives(t *testing.T) {
	a := ivt.DefaultAgents()
	crawlers := crawlerInstances(t)
	missed := 0
	for _, ua := range crawlers {
		if a.Classify(ua) == ivt.Human {
			missed++
			t.Logf("crawler taken for a person: %q", ua)
		}
	}
	recall := 1 - float64(missed)/float64(len(crawlers))
	t.Logf("recall: %d of %d crawler User-Agents flagged (%.2f%%)", len(crawlers)-missed, len(crawlers), 100*recall)
	if recall < 0.99 {
		t.Errorf("recall %.4f; want ≥ 0.99", recall)
	}
	browsers := append(lines(t, "browsers-user-agents.txt"), lines(t, "browsers-extra.txt")...)
	flagged := 0
	for _, ua := range browsers {
		if why := a.Classify(ua); why != ivt.Human {
			flagged++
			t.Errorf("browser flagged %s: %q", why, ua)
		}
	}
	t.Logf("false positives: %d of %d browser User-Agents (%.3f%%)", flagged, len(browsers), 100*float64(flagged)/float64(len(browsers)))
	if float64(flagged) > 0.001*float64(len(browsers)) {
		t.Errorf("%d of %d browsers flagged; want ≤ 0.1%%", flagged, len(browsers))
	}
	// Held out: the isbot list alone against crawler-user-agents' examples.
	isbotOnly, err := ivt.NewAgents([]byte("[]"), ivtlists.IsBot)
	if err != nil {
		t.Fatal(err)
	}
	caught := 0
	for _, ua := range crawlers {
		if isbotOnly.Classify(ua) != ivt.Human {
			caught++
		}
	}
	t.Logf("held out: isbot's list and the marks alone flag %d of %d crawler-user-agents examples (%.2f%%)", caught, len(crawlers), 100*float64(caught)/float64(len(crawlers)))
}

// TestClasses checks that each kind of agent gets its reason.
func TestClasses(t *testing.T) {
	a := ivt.DefaultAgents()
	for _, l := range lines(t, "previews.txt") {
		want, ua, _ := strings.Cut(l, "\t")
		if got := a.Classify(ua); got.String() != want {
			t.Errorf("Classify(%q) = %s; want %s", ua, got, want)
		}
	}
}

// TestReasonRemembers checks that Reason answers what Classify says,
// from memory the second time, and bounds what it keeps.
func TestReasonRemembers(t *testing.T) {
	a := ivt.DefaultAgents()
	for _, ua := range []string{"curl/8.5.0", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", strings.Repeat("x", ivt.MaxAgent+1)} {
		for range 2 {
			if got, want := a.Reason([]byte(ua)), a.Classify(ua); got != want {
				t.Errorf("Reason(%.40q) = %s; want %s", ua, got, want)
			}
		}
	}
	ua := []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36")
	if n := testing.AllocsPerRun(100, func() { a.Reason(ua) }); n != 0 {
		t.Errorf("Reason of a known User-Agent allocates %v times; want 0", n)
	}
}

func TestParseNames(t *testing.T) {
	for r := ivt.Human; r < ivt.NumReasons; r++ {
		if got := ivt.Parse(r.Name()); got != r {
			t.Errorf("Parse(%q) = %v; want %v", r.Name(), got, r)
		}
	}
	if got := ivt.Parse("somethingNew"); got != ivt.Crawler {
		t.Errorf("Parse(unknown) = %v; want crawler", got)
	}
}

func TestRequest(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "dc.txt")
	if err := os.WriteFile(file, []byte("# a cloud\n203.0.113.0/24\n2001:db8::/32 # v6\n\n198.51.100.7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rg, err := ivt.ReadRanges(false, file)
	if err != nil {
		t.Fatal(err)
	}
	f := ivt.New(ivt.Config{Ranges: rg})
	chrome := []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36")
	for _, c := range []struct {
		r    ivt.Request
		want ivt.Reason
	}{
		{ivt.Request{UserAgent: chrome, IP: netip.MustParseAddr("192.0.2.1")}, ivt.Human},
		{ivt.Request{UserAgent: chrome, IP: netip.MustParseAddr("203.0.113.9")}, ivt.Datacenter},
		{ivt.Request{UserAgent: chrome, IP: netip.MustParseAddr("::ffff:203.0.113.9")}, ivt.Datacenter},
		{ivt.Request{UserAgent: chrome, IP: netip.MustParseAddr("198.51.100.7")}, ivt.Datacenter},
		{ivt.Request{UserAgent: chrome, IP: netip.MustParseAddr("198.51.100.8")}, ivt.Human},
		{ivt.Request{UserAgent: chrome, IP: netip.MustParseAddr("2001:db8::1")}, ivt.Datacenter},
		{ivt.Request{UserAgent: chrome, SecPurpose: []byte("prefetch;prerender")}, ivt.Prefetch},
		{ivt.Request{UserAgent: chrome, SecPurpose: []byte("prefetch")}, ivt.Prefetch},
		{ivt.Request{UserAgent: chrome, Purpose: []byte("prefetch")}, ivt.Prefetch},
		{ivt.Request{UserAgent: chrome, Webdriver: true}, ivt.Headless},
		{ivt.Request{UserAgent: []byte("curl/8.5.0"), IP: netip.MustParseAddr("203.0.113.9")}, ivt.NonBrowser},
	} {
		if got := f.Request(&c.r); got != c.want {
			t.Errorf("Request(%+v) = %s; want %s", c.r, got, c.want)
		}
	}
	if err := os.WriteFile(file, []byte("10.0.0.0/8\nnot-a-range\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ivt.ReadRanges(false, file); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("ReadRanges(bad line) = %v; want an error naming line 2", err)
	}
}

// TestVelocity checks the events a minute: past the threshold an event
// is Velocity, and the event that goes past gives out what was billed
// before it in that minute, once, whether the user or the address went
// past.
func TestVelocity(t *testing.T) {
	f := ivt.New(ivt.Config{UserEvents: 3, AddressEvents: 5})
	now := time.Date(2026, 11, 28, 10, 0, 5, 0, time.UTC)
	ip := netip.MustParseAddr("192.0.2.1")
	for i := range 3 {
		why, credits := f.Count(7, ip, now)
		if why != ivt.Human || len(credits) != 0 {
			t.Fatalf("event %d: %s, %d credits; want human, none", i+1, why, len(credits))
		}
		if f.Keep(7, ip, now, 'i', []byte{byte('a' + i)}, int64(i+1)) {
			t.Fatalf("event %d: credit now; want kept", i+1)
		}
	}
	why, credits := f.Count(7, ip, now)
	got := map[string]int64{}
	for _, c := range credits {
		if c.Kind == 'i' {
			got[string(c.Token)] = c.Cost
		}
	}
	if why != ivt.Velocity || len(credits) != 3 || got["a"] != 1 || got["b"] != 2 || got["c"] != 3 {
		t.Fatalf("4th event: %s, credits %+v; want velocity, the 3 kept (a, b, c)", why, credits)
	}
	// Another user at the address: the address goes past at its 6th event,
	// with nothing left to credit (given out once: the address kept them
	// too).
	for i := range 1 {
		if why, _ := f.Count(8, ip, now); why != ivt.Human {
			t.Fatalf("user 8 event %d: %s; want human", i+1, why)
		}
	}
	if why, credits := f.Count(8, ip, now); why != ivt.Velocity || len(credits) != 0 {
		t.Errorf("address past: %s, %d credits; want velocity, 0 (given out already)", why, len(credits))
	}
	// Past the threshold, what is billed meanwhile is credited at once.
	if !f.Keep(7, ip, now, 'i', []byte("d"), 4) {
		t.Errorf("Keep past the threshold = kept; want credit now")
	}
	// The next minute starts afresh.
	if why, _ := f.Count(7, netip.MustParseAddr("192.0.2.2"), now.Add(time.Minute)); why != ivt.Human {
		t.Errorf("next minute: %s; want human", why)
	}
	// Off: negative thresholds.
	off := ivt.New(ivt.Config{UserEvents: -1, AddressEvents: -1})
	for range 1000 {
		if why, _ := off.Count(7, ip, now); why != ivt.Human {
			t.Fatalf("rules off: %s; want human", why)
		}
	}
}

func BenchmarkReasonKnown(b *testing.B) {
	a := ivt.DefaultAgents()
	ua := []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36")
	a.Reason(ua)
	b.ReportAllocs()
	for b.Loop() {
		a.Reason(ua)
	}
}

// BenchmarkReasonParallel is a known User-Agent read on every core at
// once (a page's traffic is a few popular browsers): reads share nothing
// they write.
func BenchmarkReasonParallel(b *testing.B) {
	a := ivt.DefaultAgents()
	ua := []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36")
	a.Reason(ua)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.Reason(ua)
		}
	})
}

// BenchmarkClassify is a User-Agent seen for the first time (a browser's:
// every list is read to its end).
func BenchmarkClassify(b *testing.B) {
	a := ivt.DefaultAgents()
	b.ReportAllocs()
	for b.Loop() {
		a.Classify("Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.7444.46 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/530.0.0.45.74;]")
	}
}

func BenchmarkRequest(b *testing.B) {
	f := ivt.New(ivt.Config{})
	r := ivt.Request{UserAgent: []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"), IP: netip.MustParseAddr("192.0.2.1")}
	b.ReportAllocs()
	for b.Loop() {
		f.Request(&r)
	}
}

// BenchmarkCountKeep is a billed event of one of 10,000 users, each at
// its own address, each making 20 events a minute (under the default
// thresholds): counted and kept, for the user and for the address. The
// shards' arrays grow in the first minute and are reused after.
func BenchmarkCountKeep(b *testing.B) {
	b.Run("alone", func(b *testing.B) { benchCountKeep(b, nil) })
	// Shared: the same, with a Sync every 25,000 events (every 250 ms at
	// 100,000 events a second) to counts in memory: what the request's
	// path pays for sharing, the Sync's own work included.
	b.Run("shared", func(b *testing.B) { benchCountKeep(b, new(counters.MemoryCounts)) })
}

func benchCountKeep(b *testing.B, shared ivt.SharedCounts) {
	f := ivt.New(ivt.Config{Shared: shared})
	now := time.Now()
	token := make([]byte, 96)
	b.ReportAllocs()
	i := uint32(0)
	for b.Loop() {
		i++
		u := i%10000 + 1
		ip := netip.AddrFrom4([4]byte{10, byte(u >> 16), byte(u >> 8), byte(u)})
		if i%200_000 == 0 {
			now = now.Add(time.Minute)
		}
		f.Count(uint64(u), ip, now)
		f.Keep(uint64(u), ip, now, 'i', token, 1000)
		if i%25_000 == 0 {
			f.Sync(context.Background())
		}
	}
}

// TestAddressIsAPrefix: the address rules count an IPv6 client by its
// /64 (a subscriber's: rotating the low 64 bits is free), or its /56 when
// told; an IPv4 address whole; an IPv4-mapped IPv6 address as its IPv4.
func TestAddressIsAPrefix(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 5, 0, time.UTC)
	for _, c := range []struct {
		name   string
		bits   int
		addrs  []string
		sameAs bool // counted as one address
	}{
		{"the low 64 bits of a /64", 0, []string{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:db8:1:2:abcd:1:2:3", "2001:db8:1:2::7"}, true},
		{"/64s of a /56, by /64", 0, []string{"2001:db8:1:200::1", "2001:db8:1:201::1", "2001:db8:1:2ff::1", "2001:db8:1:2aa::1"}, false},
		{"/64s of a /56, by /56", 56, []string{"2001:db8:1:200::1", "2001:db8:1:201::1", "2001:db8:1:2ff::1", "2001:db8:1:2aa::1"}, true},
		{"IPv4 neighbours", 0, []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}, false},
		{"an IPv4 address, mapped or not", 0, []string{"192.0.2.1", "::ffff:192.0.2.1", "192.0.2.1", "::ffff:192.0.2.1"}, true},
	} {
		f := ivt.New(ivt.Config{AddressEvents: 3, IPv6Prefix: c.bits})
		var why ivt.Reason
		for _, a := range c.addrs {
			why, _ = f.Count(0, netip.MustParseAddr(a), now)
		}
		if got := why == ivt.Velocity; got != c.sameAs {
			t.Errorf("%s: the 4th event, past 3 a minute = %s; want velocity %v", c.name, why, c.sameAs)
		}
	}
}

// TestClickRules: an address's clicks an hour are judged against its
// impressions once there are ClickRateMin of them — a person's share
// passes, a script's is ClickRate and gives back what its clicks billed
// that hour, once (not again by the minute's velocity); a campaign takes
// at most CampaignClicks clicks an hour from an address; the next hour
// starts afresh.
func TestClickRules(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 5, 0, time.UTC)
	ip := netip.MustParseAddr("198.51.100.7")
	f := ivt.New(ivt.Config{ClickRateMin: 4, MaxClickRate: 0.5, CampaignClicks: 100, AddressEvents: 100})
	for range 6 {
		f.Impressed(ip, now)
	}
	for i := range 3 { // 3 of 6: judged from the 4th on
		if why, _ := f.Click(1, ip, now); why != ivt.Human {
			t.Fatalf("click %d of 6 impressions: %s; want human", i+1, why)
		}
		f.Count(0, ip, now)
		f.Keep(0, ip, now, 'c', []byte{byte('a' + i)}, 5)
		f.KeepClick(ip, now, 'c', []byte{byte('a' + i)}, 5)
	}
	why, credits := f.Click(1, ip, now) // 4 of 6: past half
	if why != ivt.ClickRate || len(credits) != 3 {
		t.Fatalf("4th click of 6 impressions: %s, %d credits; want clickRate, the 3 billed", why, len(credits))
	}
	if why, credits := f.Click(1, ip, now); why != ivt.ClickRate || len(credits) != 0 {
		t.Errorf("5th click: %s, %d credits; want clickRate, none (given out)", why, len(credits))
	}
	for range 97 { // with the 3 above, 100: the next is the first past
		f.Count(0, ip, now)
	}
	if why, credits := f.Count(0, ip, now); why != ivt.Velocity || len(credits) != 0 {
		t.Errorf("the address past its events a minute: %s, %d credits; want velocity, none (the clicks' credits given out already)", why, len(credits))
	}
	for range 20 {
		f.Impressed(ip, now)
	}
	if why, _ := f.Click(1, ip, now); why != ivt.Human {
		t.Errorf("6th click of 26 impressions: %s; want human", why)
	}
	limit := ivt.New(ivt.Config{CampaignClicks: 2, MaxClickRate: -1})
	for i, want := range []ivt.Reason{ivt.Human, ivt.Human, ivt.ClickLimit} {
		if why, _ := limit.Click(1, ip, now); why != want {
			t.Errorf("campaign 1's click %d: %s; want %s", i+1, why, want)
		}
	}
	if why, _ := limit.Click(2, ip, now); why != ivt.Human {
		t.Errorf("campaign 2's first click: %s; want human", why)
	}
	if why, _ := limit.Click(1, ip, now.Add(time.Hour)); why != ivt.Human {
		t.Errorf("campaign 1's click the next hour: %s; want human", why)
	}
}

// TestVelocityShared: a client at 1.5× the user threshold, its events
// split between two instances, is not caught by either alone (each sees
// 0.75×), and is caught once they share their counts (Sync): from the
// event after the threshold on, by whichever instance it reaches; each
// instance's kept events are credited by its own first event past.
func TestVelocityShared(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 5, 0, time.UTC)
	ip := netip.MustParseAddr("192.0.2.1")
	run := func(shared ivt.SharedCounts) (invalid int, credits int) {
		a := ivt.New(ivt.Config{UserEvents: 20, AddressEvents: -1, Shared: shared})
		b := ivt.New(ivt.Config{UserEvents: 20, AddressEvents: -1, Shared: shared})
		for i := range 30 {
			f := a
			if i%2 == 1 {
				f = b
			}
			why, cs := f.Count(7, ip, now)
			if why == ivt.Velocity {
				invalid++
			} else if f.Keep(7, ip, now, 'i', []byte{byte(i)}, 1) {
				credits++ // went past while it was billed: credited at once
			}
			credits += len(cs)
			if i%4 == 3 { // the instances share every few events
				for _, f := range []*ivt.Filter{a, b} {
					if err := f.Sync(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return invalid, credits
	}
	if invalid, credits := run(nil); invalid != 0 || credits != 0 {
		t.Errorf("apart: %d invalid, %d credits; want none (each instance sees 15 of 20)", invalid, credits)
	}
	invalid, credits := run(new(counters.MemoryCounts))
	// Shared every 4 events, an instance learns the others' count late by
	// at most 3 events: the 21st to the 24th event is the first caught.
	if invalid < 30-24 || invalid > 30-20 {
		t.Errorf("shared: %d invalid; want 6 to 10 of 30 (the threshold is 20)", invalid)
	}
	if credits != 30-invalid {
		t.Errorf("shared: %d credits of %d events billed; want each credited once, by its instance's first event past", credits, 30-invalid)
	}
}
