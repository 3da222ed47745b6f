package tracking

import (
	"testing"
	"time"
)

// TestVersion5Tokens: a token issued before bidders (layout 5: no Bidder
// after KV) still opens, as Marquee's own ad's.
func TestVersion5Tokens(t *testing.T) {
	s, err := NewSigner([]byte("the current key, 32 bytes long!!"), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	p := Payload{Ad: 7, Campaign: 3, Placement: "home", PriceMicros: 2_000_000, Issued: now, Expires: now.Add(time.Hour), Country: "TW", KV: "section=news"}
	tok := s.seal(nil, func(raw []byte) []byte {
		raw = appendPayload(raw, &p)
		raw[0] = 5
		return raw[:len(raw)-6] // the empty bidder's length, the IVT, the denied activities and signals
	})
	got, err := s.Open(tok, now)
	if err != nil || got != p {
		t.Fatalf("Open(a version-5 token of %+v) = %+v, %v", p, got, err)
	}
}

// TestVersion6Tokens: a token issued before invalid-traffic reasons
// (layout 6: nothing after Bidder) still opens, as a person's.
func TestVersion6Tokens(t *testing.T) {
	s, err := NewSigner([]byte("the current key, 32 bytes long!!"), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	p := Payload{Ad: 7, Campaign: 3, Placement: "home", PriceMicros: 2_000_000, Issued: now, Expires: now.Add(time.Hour), Bidder: "appnexus"}
	tok := s.seal(nil, func(raw []byte) []byte {
		raw = appendPayload(raw, &p)
		raw[0] = 6
		return raw[:len(raw)-5] // the IVT, the denied activities and signals
	})
	got, err := s.Open(tok, now)
	if err != nil || got != p {
		t.Fatalf("Open(a version-6 token of %+v) = %+v, %v", p, got, err)
	}
	p.IVT = 3
	if got, err := s.Open(s.Append(nil, &p), now); err != nil || got != p {
		t.Fatalf("Open(Append(%+v)) = %+v, %v", p, got, err)
	}
}

// TestVersion7Tokens: a token issued before privacy activities (layout
// 7: nothing after IVT) still opens, nothing denied; a version-8 token
// keeps its denied activities.
func TestVersion7Tokens(t *testing.T) {
	s, err := NewSigner([]byte("the current key, 32 bytes long!!"), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0).UTC()
	p := Payload{Ad: 7, Campaign: 3, Placement: "home", PriceMicros: 2_000_000, Issued: now, Expires: now.Add(time.Hour), IVT: 2}
	tok := s.seal(nil, func(raw []byte) []byte {
		raw = appendPayload(raw, &p)
		raw[0] = 7
		return raw[:len(raw)-4] // the denied activities and signals
	})
	got, err := s.Open(tok, now)
	if err != nil || got != p {
		t.Fatalf("Open(a version-7 token of %+v) = %+v, %v", p, got, err)
	}
	p.Denied, p.Signals = 0x0102, 0x0041
	if got, err := s.Open(s.Append(nil, &p), now); err != nil || got != p {
		t.Fatalf("Open(Append(%+v)) = %+v, %v", p, got, err)
	}
}
