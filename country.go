package marquee

import "strings"

// iso3166 lists every officially assigned ISO 3166-1 alpha-2 code.
const iso3166 = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
	"BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
	"DE DJ DK DM DO DZ " +
	"EC EE EG EH ER ES ET " +
	"FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
	"HK HM HN HR HT HU " +
	"ID IE IL IM IN IO IQ IR IS IT " +
	"JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ " +
	"LA LB LC LI LK LR LS LT LU LV LY " +
	"MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ " +
	"OM " +
	"PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
	"QA " +
	"RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
	"TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ " +
	"VA VC VE VG VI VN VU " +
	"WF WS " +
	"YE YT " +
	"ZA ZM ZW"

// CountrySlots is the size of the dense country numbering used by
// CountrySlot: one slot per pair of letters A–Z.
const CountrySlots = 26 * 26

var (
	countryKnown [CountrySlots]bool
	countryCodes [CountrySlots]string // every pair of letters, upper-case
)

func init() {
	for _, c := range strings.Fields(iso3166) {
		countryKnown[int(c[0]-'A')*26+int(c[1]-'A')] = true
	}
	for slot := range countryCodes {
		countryCodes[slot] = string([]byte{byte('A' + slot/26), byte('A' + slot%26)})
	}
}

// Countries returns every ISO 3166-1 alpha-2 code, upper-case, sorted.
func Countries() []string { return strings.Fields(iso3166) }

// CountrySlot returns the dense number (0 ≤ n < CountrySlots) of an
// ISO 3166-1 alpha-2 code given in either case, and whether the code is
// assigned. It does not allocate.
func CountrySlot[T ~string | ~[]byte](code T) (int, bool) {
	if len(code) != 2 {
		return 0, false
	}
	a, b := upper(code[0]), upper(code[1])
	if a < 'A' || a > 'Z' || b < 'A' || b > 'Z' {
		return 0, false
	}
	n := int(a-'A')*26 + int(b-'A')
	return n, countryKnown[n]
}

// CountryCode returns the upper-case code of a slot from CountrySlot. It
// does not allocate.
func CountryCode(slot int) string { return countryCodes[slot] }

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}
