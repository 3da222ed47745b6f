package privacy

import (
	"bytes"
	"strconv"

	"github.com/prebid/go-gdpr/api"
	"github.com/prebid/go-gdpr/consentconstants"
	tcf2 "github.com/prebid/go-gdpr/vendorconsent/tcf2"
	gpp "github.com/prebid/go-gpp"
	"github.com/prebid/go-gpp/constants"
	"github.com/prebid/go-gpp/sections"
	"github.com/prebid/go-gpp/sections/uspca"
	"github.com/prebid/go-gpp/sections/uspco"
	"github.com/prebid/go-gpp/sections/uspct"
	"github.com/prebid/go-gpp/sections/uspnat"
	"github.com/prebid/go-gpp/sections/usput"
	"github.com/prebid/go-gpp/sections/uspva"
)

// Activity is something Marquee may or may not do with a request's
// visitor (docs/privacy.md#activities). Their names are the API's and
// the privacy rules'.
type Activity uint8

// The activities.
const (
	UserKey            Activity = iota // store and read a user key (its pseudonym): frequency caps and reach by user
	Personalise                        // select by what is known of the user: its segments and history
	Measure                            // measurement by user: its pseudonym on the events of its decisions
	Attribute                          // attribute a conversion on an advertiser's site to an ad seen elsewhere (post-view)
	TransmitUserID                     // send a user id to a buyer
	TransmitPreciseGeo                 // send a location more precise than the country to a buyer
	TransmitIP                         // send the full address and User-Agent to a buyer
	TransmitURL                        // send the page's URL to a buyer
	SyncUser                           // match the user's id with a buyer's
	Report                             // count the request in aggregate reports
	NumActivities
)

// ActivityNames are the activities' names, by Activity.
var ActivityNames = [NumActivities]string{"userKey", "personalise", "measure", "attribute", "transmitUserId", "transmitPreciseGeo",
	"transmitIp", "transmitUrl", "syncUser", "report"}

func (a Activity) String() string { return ActivityNames[a] }

// Activities is a set of activities.
type Activities uint16

// AppendNames appends the set's names, comma-separated, in ActivityNames'
// order.
func (s Activities) AppendNames(dst []byte) []byte {
	first := true
	for a := range NumActivities {
		if s.Has(a) {
			if !first {
				dst = append(dst, ',')
			}
			dst, first = append(dst, ActivityNames[a]...), false
		}
	}
	return dst
}

// Has reports whether a is in the set.
func (s Activities) Has(a Activity) bool { return s&(1<<a) != 0 }

func (s Activities) with(as ...Activity) Activities {
	for _, a := range as {
		s |= 1 << a
	}
	return s
}

// Carried is a set of the signals a request carried (SignalNames).
type Carried uint16

// The signals.
const (
	SaidGPC     Carried = 1 << iota // Sec-GPC: 1 (or a GPP US section's Gpc)
	SaidTCF                         // GDPR applies, with or without a TC string
	SaidGPP                         // a GPP string
	SaidUSNat                       // GPP section 7 applies
	SaidUSState                     // a GPP US state section (8 to 12) applies
	SaidUSP                         // a US Privacy (CCPA) string
	SaidCOPPA                       // a child-directed site or placement
	SaidGiven                       // the publisher's own word
)

// SignalNames are the signals' names in event lines and reports, by bit.
var SignalNames = [...]string{"gpc", "tcf", "gpp", "usnat", "usstate", "usp", "coppa", "given"}

// AppendNames appends the signals' names, comma-separated, in
// SignalNames' order.
func (c Carried) AppendNames(dst []byte) []byte {
	first := true
	for i, n := range SignalNames {
		if c&(1<<i) != 0 {
			if !first {
				dst = append(dst, ',')
			}
			dst, first = append(dst, n...), false
		}
	}
	return dst
}

// userActivities are what a request without a user key may not do.
var userActivities = []Activity{UserKey, Personalise, Measure, Attribute, TransmitUserID, TransmitPreciseGeo, TransmitIP, SyncUser}

// Verdict is what a request's signals allow (Policy.Decide).
type Verdict struct {
	// Limit is why no user key may be used (None: one may).
	Limit Limit
	// Denied are the activities the signals forbid.
	Denied Activities
	// Carried are the signals the request carried.
	Carried Carried
	// Sections are the GPP sections that apply (bits by id), for rules'
	// conditions.
	Sections uint64
}

// EventLimit is why an event (a beacon, a redirect) keeps no uid: the
// verdict's Limit, else NotMeasured when measurement by user is denied.
func (v Verdict) EventLimit() Limit {
	if v.Limit == None && v.Denied.Has(Measure) {
		return NotMeasured
	}
	return v.Limit
}

// Allows reports whether v allows a.
func (v Verdict) Allows(a Activity) bool { return !v.Denied.Has(a) }

// The TCF purposes the activities need (TCF v2.2 policy).
const (
	purposeStore        = consentconstants.InfoStorageAccess // 1: store and access information on a device
	purposeProfile      = consentconstants.Purpose(3)        // create a personalised advertising profile
	purposeSelectAds    = consentconstants.Purpose(4)        // use a profile to select personalised advertising
	purposeMeasureAds   = consentconstants.Purpose(7)        // measure advertising performance
	specialFeatureGeo   = 1                                  // use precise geolocation data
	maxGPPLength        = 4096
	maxGPPSections      = 16
	uspOptOutPosition   = 2 // "1YYN": version, notice, opt-out of sale, LSPA
	sensitivePreciseGeo = 7 // usnat's SensitiveDataProcessing[7]: precise geolocation (v1 layout)
)

// Decide is what a request's signals allow, as docs/privacy.md's table
// says: the publisher's own word; GDPR with its TCF string (purposes 1,
// 3, 4, 7, special feature 1, the policy's vendor); the US opt-outs of
// GPP's sections, the US Privacy string and GPC; COPPA; and, in strict
// mode, whether anything was said. A malformed string of any kind is a
// signal of no consent. Only requests that carry a string pay for its
// parse.
func (p *Policy) Decide(s Signal) Verdict {
	var v Verdict
	if s.GPC {
		v.Carried |= SaidGPC
	}
	tc := s.TCF
	gdpr := s.GDPR
	malformed := false
	usOptOut := s.GPC
	usGeoOptOut := false
	if len(s.GPP) > 0 {
		v.Carried |= SaidGPP
		g := readGPP(s.GPP, s.GPPSID)
		switch {
		case g.malformed:
			// Unreadable: nothing it says can be relied on — no consent.
			usOptOut, usGeoOptOut, malformed = true, true, true
		default:
			v.Sections = g.sections
			if g.tcf != nil {
				if gdpr == -1 {
					gdpr = 1
				}
				if len(tc) == 0 {
					tc = g.tcf
				}
			}
			usOptOut = usOptOut || g.optOut
			usGeoOptOut = usGeoOptOut || g.geoOptOut
			if g.gpc {
				v.Carried |= SaidGPC
				usOptOut = true
			}
			if g.usnat {
				v.Carried |= SaidUSNat
			}
			if g.state {
				v.Carried |= SaidUSState
			}
		}
	}
	if len(s.USP) > 0 {
		v.Carried |= SaidUSP
		if uspOptsOut(s.USP) {
			usOptOut = true
		}
	}
	if usOptOut {
		v.Denied = v.Denied.with(Personalise, Attribute, TransmitUserID, TransmitPreciseGeo, TransmitIP, SyncUser)
	}
	if usGeoOptOut {
		v.Denied = v.Denied.with(TransmitPreciseGeo, TransmitIP)
	}
	switch {
	case s.Given == No:
		v.Carried |= SaidGiven
		v.Limit = Withheld
	case s.Given == Yes:
		v.Carried |= SaidGiven
	case gdpr == 1 || gdpr == -1 && len(tc) > 0:
		v.Carried |= SaidTCF
		v.Limit, v.Denied = p.tcfDecide(tc, v.Denied)
	case gdpr == -1 && p.mode == Strict:
		// Strict: a user key needs a signal that allows one — consent, or
		// GDPR said not to apply; an opt-out regime's strings do not.
		v.Limit = NoSignal
	}
	if malformed && v.Limit == None {
		v.Limit = Malformed
	}
	if s.Child {
		v.Carried |= SaidCOPPA
		v.Limit = Child
	}
	if v.Limit != None {
		v.Denied = v.Denied.with(userActivities...)
	}
	return v
}

// tcfDecide is what a TC string allows beside what is denied already:
// without purpose 1 (and the policy's vendor) no user key and nothing of
// the user; personalisation and a user id sent need purposes 3 and 4;
// measurement and attribution purpose 7 (consent or legitimate
// interest); precise geography special feature 1.
func (p *Policy) tcfDecide(tcf []byte, denied Activities) (Limit, Activities) {
	c, ok := parseTCF(tcf)
	if !ok || !c.PurposeAllowed(purposeStore) || p.vendor != 0 && !c.VendorConsent(p.vendor) {
		return Refused, denied
	}
	if !c.PurposeAllowed(purposeProfile) || !c.PurposeAllowed(purposeSelectAds) {
		denied = denied.with(Personalise, TransmitUserID, SyncUser)
	}
	if !c.PurposeAllowed(purposeMeasureAds) && !c.PurposeLITransparency(purposeMeasureAds) {
		denied = denied.with(Measure, Attribute)
	}
	if !c.SpecialFeatureOptIn(specialFeatureGeo) {
		denied = denied.with(TransmitPreciseGeo, TransmitIP)
	}
	return None, denied
}

// tcfString is what Decide reads of a TCF v2 string (go-gdpr's v2
// consent, which says more than its api.VendorConsents).
type tcfString interface {
	api.VendorConsents
	PurposeLITransparency(consentconstants.Purpose) bool
	SpecialFeatureOptIn(uint16) bool
}

// parseTCF reads a TCF v2 string (false: unreadable, or not v2).
func parseTCF(tcf []byte) (tcfString, bool) {
	if len(tcf) == 0 {
		return nil, false
	}
	c, err := tcf2.ParseString(string(tcf))
	if err != nil || c == nil || c.Version() != 2 {
		return nil, false
	}
	m, ok := c.(tcfString)
	return m, ok
}

// uspOptsOut reports whether a US Privacy string ("1YYN") says the user
// opted out of sale; a malformed one does (no consent).
func uspOptsOut(s []byte) bool {
	if len(s) != 4 || s[0] != '1' {
		return true
	}
	for _, c := range s[1:] {
		if c != 'Y' && c != 'N' && c != '-' {
			return true
		}
	}
	return s[uspOptOutPosition] == 'Y'
}

// gppSignals is what a GPP string says that Decide reads.
type gppSignals struct {
	malformed    bool
	tcf          []byte // section 2's TC string, when it applies
	usnat, state bool   // a US section applies
	optOut       bool   // a US section that applies opts out of sale, sharing or targeted advertising
	geoOptOut    bool   // … or of the processing of precise geolocation
	gpc          bool   // a US section's GPC subsection is set
	sections     uint64 // the sections that apply, by id
}

// readGPP reads a GPP string and the ids of the sections that apply
// (gppSid: "7" or "7,8"; none: every section the string holds).
func readGPP(s, sid []byte) gppSignals {
	var g gppSignals
	if len(s) > maxGPPLength {
		g.malformed = true
		return g
	}
	applies, ok := parseSIDs(sid)
	if !ok {
		g.malformed = true
		return g
	}
	c, errs := gpp.Parse(string(s))
	if len(errs) > 0 {
		g.malformed = true
		return g
	}
	for _, sec := range c.Sections {
		id := int(sec.GetID())
		if applies != nil && !applies[id] {
			continue
		}
		if id > 0 && id < 64 {
			g.sections |= 1 << id
		}
		switch v := sec.(type) {
		case uspnat.USPNAT:
			g.usnat = true
			g.us(v.CoreSegment.SaleOptOut, v.CoreSegment.SharingOptOut, v.CoreSegment.TargetedAdvertisingOptOut, v.CoreSegment.SensitiveDataProcessing, sensitivePreciseGeo)
			g.gpc = g.gpc || v.GPCSegment.Gpc
		case uspca.USPCA:
			g.state = true
			g.us(v.CoreSegment.SaleOptOut, v.CoreSegment.SharingOptOut, 0, v.CoreSegment.SensitiveDataProcessing, -1)
			g.gpc = g.gpc || v.GPCSegment.Gpc
		case uspva.USPVA:
			g.state = true
			g.common(v.CoreSegment)
		case uspco.USPCO:
			g.state = true
			g.common(v.CoreSegment)
			g.gpc = g.gpc || v.GPCSegment.Gpc
		case usput.USPUT:
			g.state = true
			g.us(v.CoreSegment.SaleOptOut, 0, v.CoreSegment.TargetedAdvertisingOptOut, v.CoreSegment.SensitiveDataProcessing, -1)
		case uspct.USPCT:
			g.state = true
			g.common(v.CoreSegment)
			g.gpc = g.gpc || v.GPCSegment.Gpc
		default:
			if gs, ok := sec.(gpp.GenericSection); ok {
				switch sec.GetID() {
				case constants.SectionTCFEU2:
					g.tcf = []byte(gs.GetValue())
				case constants.SectionUSPV1:
					g.optOut = g.optOut || uspOptsOut([]byte(gs.GetValue()))
				}
			}
		}
	}
	return g
}

func (g *gppSignals) common(c sections.CommonUSCoreSegment) {
	g.us(c.SaleOptOut, 0, c.TargetedAdvertisingOptOut, c.SensitiveDataProcessing, -1)
}

// us reads a US section's opt-outs: 1 is "opted out" (2 "did not", 0
// "not applicable"), and sensitive data's processing of precise
// geolocation at geo (-1: the state's layout names none apart: any
// sensitive data opted out of counts).
func (g *gppSignals) us(sale, sharing, targeted byte, sensitive []byte, geo int) {
	if sale == 1 || sharing == 1 || targeted == 1 {
		g.optOut = true
	}
	for i, v := range sensitive {
		if v == 1 && (geo < 0 || i == geo) {
			g.geoOptOut = true
		}
	}
}

// parseSIDs reads gppSid: section ids separated by commas or
// underscores (nil: none said, every section applies); false when
// malformed.
func parseSIDs(sid []byte) (map[int]bool, bool) {
	if len(bytes.TrimSpace(sid)) == 0 {
		return nil, true
	}
	out := map[int]bool{}
	for _, f := range bytes.FieldsFunc(sid, func(r rune) bool { return r == ',' || r == '_' }) {
		n, err := strconv.Atoi(string(bytes.TrimSpace(f)))
		if err != nil || n < 0 || n > 64 || len(out) >= maxGPPSections {
			return nil, false
		}
		out[n] = true
	}
	return out, true
}
