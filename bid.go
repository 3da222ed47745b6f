package marquee

// Header bidding's vocabulary (docs/api.md#header-bidding).

// MaxBidderLen is the longest bidder code.
const MaxBidderLen = 64

// IsBidderCode reports whether s is a bidder's code as Prebid names them:
// 1 to MaxBidderLen of A–Z, a–z, 0–9, _ . - (nothing an event line or a
// URL must escape).
func IsBidderCode[T ~string | ~[]byte](s T) bool {
	if len(s) == 0 || len(s) > MaxBidderLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
