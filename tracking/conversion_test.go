package tracking_test

import (
	"testing"

	"marquee/tracking"
)

// TestConversionSignature: a pixel signed with the advertiser's secret
// verifies, under the current key and the previous; any change of its
// click id, order id, value or nonce, or another key's secret, does not.
func TestConversionSignature(t *testing.T) {
	old, err := tracking.NewSigner([]byte("the previous tracking key......."), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tracking.NewSigner([]byte("the current tracking key........"), []byte("the previous tracking key......."))
	if err != nil {
		t.Fatal(err)
	}
	const nonce = "n1"
	for _, c := range []struct {
		name                   string
		secret                 string
		nonce, click, order, v string
		want                   bool
	}{
		{"signed with the secret", s.ConversionSecret(nonce), nonce, "c", "o-1", "49.90", true},
		{"signed with the previous key's secret", old.ConversionSecret(nonce), nonce, "c", "o-1", "49.90", true},
		{"another value", s.ConversionSecret(nonce), nonce, "c", "o-1", "999999999", false},
		{"another order", s.ConversionSecret(nonce), nonce, "c", "o-2", "49.90", false},
		{"another click", s.ConversionSecret(nonce), nonce, "d", "o-1", "49.90", false},
		{"a rotated secret", s.ConversionSecret("n0"), nonce, "c", "o-1", "49.90", false},
		{"no secret made", s.ConversionSecret(""), "", "c", "o-1", "49.90", false},
	} {
		sig := tracking.SignConversion(c.secret, "c", "o-1", "49.90")
		if got := s.VerifyConversion(c.nonce, []byte(c.click), []byte(c.order), []byte(c.v), []byte(sig)); got != c.want {
			t.Errorf("%s: VerifyConversion = %v; want %v", c.name, got, c.want)
		}
	}
	if s.VerifyConversion(nonce, []byte("c"), nil, nil, []byte("zz")) {
		t.Error("a malformed sig verified")
	}
}
