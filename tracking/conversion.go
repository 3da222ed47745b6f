package tracking

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// An advertiser vouches for a conversion pixel by signing it: the
// pixel's sig is the hex HMAC-SHA256, under the advertiser's conversion
// secret, of its click id, order id and value as the pixel carries them,
// each followed by a newline (docs/api.md#conversions). The secret is
// derived from a nonce the store keeps and the server's tracking key, so
// that no secret is stored: rotating it is a new nonce; rotating the
// tracking key changes every secret, though pixels signed under the
// previous key's secret are accepted while it is -tracking-previous-key.

// ConversionSecretPrefix begins every conversion secret.
const ConversionSecretPrefix = "mqcs_"

// ConversionSecret is the conversion secret of nonce under the current
// key: shown once, when it is made, and never stored.
func (s *Signer) ConversionSecret(nonce string) string {
	return conversionSecret(s.key, nonce)
}

func conversionSecret(key []byte, nonce string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("marquee conversion secret\x00" + nonce))
	return ConversionSecretPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// VerifyConversion reports whether sig signs clickID, orderID and value
// under the conversion secret of nonce (of the current key or the
// previous). An empty nonce (no secret made) verifies nothing.
func (s *Signer) VerifyConversion(nonce string, clickID, orderID, value, sig []byte) bool {
	if nonce == "" || len(sig) != 2*sha256.Size {
		return false
	}
	var got [sha256.Size]byte
	if _, err := hex.Decode(got[:], sig); err != nil {
		return false
	}
	for _, key := range [][]byte{s.key, s.previous} {
		if key != nil && hmac.Equal(got[:], conversionMAC(conversionSecret(key, nonce), clickID, orderID, value)) {
			return true
		}
	}
	return false
}

// SignConversion is the sig an advertiser's server puts on a conversion
// pixel (hex), under its conversion secret.
func SignConversion(secret, clickID, orderID, value string) string {
	return hex.EncodeToString(conversionMAC(secret, []byte(clickID), []byte(orderID), []byte(value)))
}

func conversionMAC(secret string, clickID, orderID, value []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	for _, part := range [][]byte{clickID, orderID, value} {
		m.Write(part)
		m.Write([]byte{'\n'})
	}
	return m.Sum(nil)
}

// NewNonce returns a fresh nonce for a secret.
func NewNonce() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
