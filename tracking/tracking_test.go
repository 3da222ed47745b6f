package tracking_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"marquee"
	"marquee/tracking"
)

func signer(t *testing.T, key, previous string) *tracking.Signer {
	t.Helper()
	var prev []byte
	if previous != "" {
		prev = []byte(previous)
	}
	s, err := tracking.NewSigner([]byte(key), prev)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Tokens round-trip every payload, including hostile ones; a token
// changed anywhere, signed with another key, or expired is refused.
func TestTokens(t *testing.T) {
	s := signer(t, "the current key, 32 bytes long!!", "")
	now := time.Unix(1_800_000_000, 0).UTC()
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"", "home-top", strings.Repeat("z", marquee.MaxPlacementName), "a_b-c"}
	kvs := []string{"", "section=sports", "section=sports&pos=atf&tags=%22%3C%3E", strings.Repeat("k", tracking.MaxKV)}
	bidders := []string{"", "appnexus", `a"<>\b`, strings.Repeat("b", tracking.MaxBidder)}
	for i := range 2000 {
		p := tracking.Payload{Ad: r.Int64(), Campaign: r.Int64N(1000),
			Placement: names[i%len(names)], UserHash: r.Uint64(), PriceMicros: r.Int64() - math.MaxInt64/2,
			Issued: now, Expires: now.Add(time.Duration(1+r.IntN(48)) * time.Hour), Limit: uint8(r.IntN(4)),
			Country: []string{"", "TW"}[r.IntN(2)], Platform: []string{"", "ios"}[r.IntN(2)], KV: kvs[r.IntN(len(kvs))], Bidder: bidders[r.IntN(len(bidders))]}
		if i%7 == 0 { // every field at its longest
			p.Ad, p.Campaign, p.PriceMicros, p.Placement, p.KV, p.Bidder = math.MaxInt64, math.MaxInt64, math.MinInt64, names[2], kvs[3], bidders[3]
		}
		for j := range p.Decision {
			p.Decision[j] = byte(r.Uint32())
		}
		tok := s.Append(nil, &p)
		got, err := s.Open(tok, now)
		if err != nil || got != p {
			t.Fatalf("Open(Append(%+v)) = %+v, %v", p, got, err)
		}
		if i%50 == 0 { // every byte changed is refused
			for k := range tok {
				bad := []byte(string(tok))
				bad[k] ^= 1
				if _, err := s.Open(bad, now); err == nil {
					t.Fatalf("token %q with byte %d changed was accepted", tok, k)
				}
			}
		}
		if _, err := s.Open(tok, p.Expires); err != tracking.ErrExpired {
			t.Fatalf("at its expiry: %v; want ErrExpired", err)
		}
	}
	for _, junk := range []string{"", "x", "!!!!", strings.Repeat("A", 600), strings.Repeat("A", 40)} {
		if _, err := s.Open([]byte(junk), now); err != tracking.ErrBadToken {
			t.Errorf("Open(%q) = %v; want ErrBadToken", junk, err)
		}
	}
}

// A rotated key: tokens of the previous key still open; of any other, not.
func TestKeyRotation(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := tracking.Payload{Ad: 7, Campaign: 3, Placement: "side", Issued: now, Expires: now.Add(time.Hour)}
	old := signer(t, "the old key, at least 16 bytes", "")
	tok := old.Append(nil, &p)
	if _, err := signer(t, "the new key, at least 16 bytes", "the old key, at least 16 bytes").Open(tok, now); err != nil {
		t.Errorf("a token of the previous key: %v; want it accepted", err)
	}
	if _, err := signer(t, "the new key, at least 16 bytes", "").Open(tok, now); err != tracking.ErrBadToken {
		t.Errorf("a token of an unknown key: %v; want ErrBadToken", err)
	}
	if _, err := tracking.NewSigner([]byte("short"), nil); err == nil {
		t.Error("a 5-byte key was accepted")
	}
}

// A tracking URL's path round-trips its kind and token; any other path is
// refused.
func TestPaths(t *testing.T) {
	for _, kind := range []byte{tracking.Impression, tracking.View, tracking.Click, tracking.Start, tracking.FirstQuartile,
		tracking.Midpoint, tracking.ThirdQuartile, tracking.Complete, tracking.Pause, tracking.Mute, tracking.Skip, tracking.Error} {
		path := tracking.AppendPath(nil, kind, []byte("TOKEN-_x"))
		k, tok, ok := tracking.ParsePath(path)
		if !ok || k != kind || string(tok) != "TOKEN-_x" || !strings.HasPrefix(string(path), tracking.Prefix) {
			t.Errorf("ParsePath(%q) = %q, %q, %v; want %q, TOKEN-_x", path, k, tok, ok, kind)
		}
		if tracking.KindName(kind) == "" {
			t.Errorf("KindName(%q) is empty", kind)
		}
	}
	for _, bad := range []string{"", "/t/", "/t/i", "/t/i/", "/t/z/TOKEN", "/t/\xe9/TOKEN", "/t/iTOKEN", "/r/i/TOKEN", "t/i/TOKEN"} {
		if k, tok, ok := tracking.ParsePath([]byte(bad)); ok {
			t.Errorf("ParsePath(%q) = %q, %q, true; want refused", bad, k, tok)
		}
	}
}

// BenchmarkAppend measures writing one token: the payload, its
// HMAC-SHA256 and base64url (a decision writes one per chosen ad).
func BenchmarkAppend(b *testing.B) {
	s, err := tracking.NewSigner([]byte("a tracking key of 32 bytes......"), nil)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	p := tracking.Payload{Ad: 4321, Campaign: 432, Placement: "home-top", UserHash: 0x1234567890abcdef,
		PriceMicros: 2_500_000, Issued: now, Expires: now.Add(tracking.DefaultTTL)}
	var buf [256]byte
	b.ReportAllocs()
	for b.Loop() {
		p.Decision[0]++
		if len(s.Append(buf[:0], &p)) == 0 {
			b.Fatal("empty token")
		}
	}
}

// TestClickIDs: a click id opens to what it was made of; a tracking
// token is no click id and a click id no token; a changed byte, or a
// click id of another key, is refused.
func TestClickIDs(t *testing.T) {
	s, err := tracking.NewSigner([]byte("0123456789abcdef-click"), nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0).UTC()
	c := tracking.Clicked{Payload: tracking.Payload{Decision: [16]byte{9, 8, 7}, Ad: 5, Campaign: 3, Placement: "side", UserHash: 77, PriceMicros: 1_500_000,
		Issued: at, Expires: at.Add(tracking.MaxClickAge), Country: "TW", Platform: "web", KV: "section=news"}, Verified: true}
	id := s.AppendClick(nil, &c)
	got, err := s.OpenClick(id)
	if err != nil || got != c {
		t.Fatalf("OpenClick(AppendClick(%+v)) = %+v, %v", c, got, err)
	}
	if _, err := s.Open(id, at); err == nil {
		t.Errorf("Open(a click id) accepted it as a tracking token")
	}
	token := s.Append(nil, &c.Payload)
	if _, err := s.OpenClick(token); err == nil {
		t.Errorf("OpenClick(a tracking token) accepted it")
	}
	for i := range id {
		bad := append([]byte(nil), id...)
		bad[i] ^= 1
		if _, err := s.OpenClick(bad); err == nil && string(bad) != string(id) {
			t.Fatalf("OpenClick accepted the click id with byte %d changed", i)
		}
	}
	other, _ := tracking.NewSigner([]byte("another-key-0123456789"), nil)
	if _, err := other.OpenClick(id); err == nil {
		t.Errorf("another key's signer accepted the click id")
	}
}

// Signing a token allocates nothing, and opening one two things: the
// placement's string and the buffer the token is decoded into, which
// base64's decoder makes escape (the hot paths of decisions and pixels).
func TestTokensAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector")
	}
	s, _ := tracking.NewSigner([]byte("0123456789abcdef-alloc"), nil)
	now := time.Now()
	p := tracking.Payload{Ad: 1, Campaign: 2, Placement: "side", Issued: now, Expires: now.Add(time.Hour)}
	dst := make([]byte, 0, 512)
	tok := s.Append(nil, &p)
	if n := testing.AllocsPerRun(100, func() { s.Append(dst[:0], &p) }); n != 0 {
		t.Errorf("Append: %v allocations; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { s.Open(tok, now) }); n > 2 {
		t.Errorf("Open: %v allocations; want at most 2", n)
	}
}

// TestRenderProof: a render proof checks for its decision, in its step
// and the two after, under the key it was made with or after that key is
// the previous one; never for another decision, later, or changed.
func TestRenderProof(t *testing.T) {
	oldKey, newKey := []byte("the old tracking key of 32 bytes"), []byte("the new tracking key of 32 bytes")
	old, _ := tracking.NewSigner(oldKey, nil)
	rotated, _ := tracking.NewSigner(newKey, oldKey)
	stranger, _ := tracking.NewSigner([]byte("another network's key of 32 b.."), nil)
	at := time.Date(2026, 3, 1, 12, 1, 0, 0, time.UTC)
	d1, d2 := [16]byte{1}, [16]byte{2}
	proof := old.AppendRenderProof(nil, d1, at)
	changed := append([]byte(nil), proof...)
	changed[3] ^= 2
	cases := []struct {
		name   string
		s      *tracking.Signer
		proof  []byte
		d      [16]byte
		now    time.Time
		wantOK bool
	}{
		{"at once", old, proof, d1, at, true},
		{"14 minutes later (two steps on)", old, proof, d1, at.Add(13 * time.Minute), true},
		{"15 minutes later (three steps on)", old, proof, d1, at.Add(14 * time.Minute), false},
		{"before it was made", old, proof, d1, at.Add(-5 * time.Minute), false},
		{"another decision", old, proof, d2, at, false},
		{"changed", old, changed, d1, at, false},
		{"truncated", old, proof[:len(proof)-1], d1, at, false},
		{"empty", old, nil, d1, at, false},
		{"its key now the previous one", rotated, proof, d1, at, true},
		{"another key", stranger, proof, d1, at, false},
	}
	for _, c := range cases {
		if got := c.s.CheckRenderProof(c.proof, c.d, c.now); got != c.wantOK {
			t.Errorf("%s: CheckRenderProof(%q) = %v; want %v", c.name, c.proof, got, c.wantOK)
		}
	}
}
