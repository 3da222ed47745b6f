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
		return raw[:len(raw)-1] // the empty bidder's length
	})
	got, err := s.Open(tok, now)
	if err != nil || got != p {
		t.Fatalf("Open(a version-5 token of %+v) = %+v, %v", p, got, err)
	}
}
