// Package privacytest writes TCF v2 consent strings for tests, from the
// IAB's specification: an encoder apart from the parser Marquee uses.
package privacytest

import (
	"encoding/base64"
	"time"
)

// TCString writes a TCF v2 core string from the IAB's layout
// ("Consent string and vendor list formats v2", core segment), with the
// purposes consented to and the vendors consented to (a bit field): an
// encoder apart from the parser under test.
func TCString(purposes []int, vendors []int) string {
	var bits []bool
	put := func(v uint64, n int) {
		for i := n - 1; i >= 0; i-- {
			bits = append(bits, v>>uint(i)&1 == 1)
		}
	}
	deci := uint64(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli() / 100)
	put(2, 6)        // Version
	put(deci, 36)    // Created
	put(deci, 36)    // LastUpdated
	put(7, 12)       // CmpId
	put(1, 12)       // CmpVersion
	put(1, 6)        // ConsentScreen
	put(4<<6|13, 12) // ConsentLanguage "EN"
	put(150, 12)     // VendorListVersion
	put(4, 6)        // TcfPolicyVersion
	put(0, 1)        // IsServiceSpecific
	put(0, 1)        // UseNonStandardTexts
	put(0, 12)       // SpecialFeatureOptIns
	var pc uint64
	for _, p := range purposes {
		pc |= 1 << uint(24-p)
	}
	put(pc, 24)      // PurposesConsent
	put(0, 24)       // PurposesLITransparency
	put(0, 1)        // PurposeOneTreatment
	put(5<<6|17, 12) // PublisherCC "FR"
	maxVendor := 0
	for _, v := range vendors {
		maxVendor = max(maxVendor, v)
	}
	put(uint64(maxVendor), 16) // MaxVendorId
	put(0, 1)                  // IsRangeEncoding: a bit field
	for id := 1; id <= maxVendor; id++ {
		on := uint64(0)
		for _, v := range vendors {
			if v == id {
				on = 1
			}
		}
		put(on, 1)
	}
	put(0, 16) // legitimate interests: MaxVendorId 0
	put(0, 1)
	put(0, 12) // NumPubRestrictions
	out := make([]byte, (len(bits)+7)/8)
	for i, b := range bits {
		if b {
			out[i/8] |= 0x80 >> uint(i%8)
		}
	}
	return base64.RawURLEncoding.EncodeToString(out)
}
