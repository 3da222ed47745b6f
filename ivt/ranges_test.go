package ivt_test

import (
	"net/netip"
	"runtime"
	"testing"

	"marquee/ivt"
)

// TestDatacenters: the vendored hosting networks' ranges hold addresses
// of the clouds they list, IPv4 and IPv6, and none of the networks left
// out on purpose (a CDN and privacy network people browse through), of
// a registry, nor private ones; without them, nothing is a data centre.
func TestDatacenters(t *testing.T) {
	rg, err := ivt.ReadRanges(true)
	if err != nil {
		t.Fatal(err)
	}
	none, _ := ivt.ReadRanges(false)
	for ip, want := range map[string]bool{
		"8.8.8.8":     true,  // Google, AS15169
		"104.131.0.1": true,  // DigitalOcean, AS14061
		"88.198.0.1":  true,  // Hetzner, AS24940
		"51.68.0.1":   true,  // OVHcloud, AS16276
		"2a01:4f8::1": true,  // Hetzner, AS24940
		"1.1.1.1":     false, // Cloudflare: WARP and Private Relay carry people
		"193.0.6.139": false, // RIPE NCC
		"192.168.1.1": false,
		"2001:db8::1": false,
	} {
		if got := rg.Contains(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Contains(%s) = %v; want %v", ip, got, want)
		}
		if none.Contains(netip.MustParseAddr(ip)) {
			t.Errorf("without the vendored ranges, Contains(%s) = true", ip)
		}
	}
	if rg.Len() < 10000 {
		t.Errorf("Len() = %d; want the vendored ranges (about 20,000)", rg.Len())
	}
}

// BenchmarkReadDatacenters: what the vendored ranges cost at start, in
// time and in memory kept (B/op is what reading allocates; the heap
// kept is reported as kept-B).
func BenchmarkReadDatacenters(b *testing.B) {
	var before, after runtime.MemStats
	var keep *ivt.Ranges
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		keep, _ = ivt.ReadRanges(true)
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "kept-B")
	runtime.KeepAlive(keep)
}

func BenchmarkContains(b *testing.B) {
	rg, _ := ivt.ReadRanges(true)
	ips := []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("81.2.69.9"), netip.MustParseAddr("2a01:4f8::1"), netip.MustParseAddr("2a02:c7f::1")}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rg.Contains(ips[i%len(ips)])
	}
}
