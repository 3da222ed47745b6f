package reports

import (
	"context"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/medama-io/go-useragent"

	"marquee"
	"marquee/eventline"
	"marquee/geoip"
	"marquee/ivt"
	"marquee/linkroute"
	"marquee/reportrow"
	"marquee/targeting"
)

// Event is what reports count of one event line (Classifier.Read): its
// counts, its hour and the dimensions it is counted by, and the entities
// it names, as the line names them (a Lookup tells which exist).
type Event struct {
	Counts
	Hour     int64 // unix seconds of the start of its UTC hour
	Country  [2]byte
	Platform string // one of marquee.Platforms
	platform uint8  // Platform's index in platforms (the Tally's keys)
	// IVT is why the event is invalid traffic (ivt.Human: a person's):
	// its line's "ivt" field, else what its User-Agent says.
	IVT      ivt.Reason
	Browser  string // Other when the parser knows none
	OS       string // Other when the parser knows none
	Device   string // a device type (targeting.Device), "" unknown
	Referrer string // the referrer's host (ReferrerHost), Direct for none
	// ErrorCode is a player's error event's VAST error code (up to four
	// digits), reportrow.NoErrorCode for none; "" for other events.
	ErrorCode string
	// UID is the uid counted in reach: nil for invalid traffic's event or
	// one longer than MaxUID.
	UID []byte
	// The entities: 0 or "" where the line names none or names one
	// malformed (Skipped says which).
	Ad, Campaign int64
	Link         string // the link's key (marquee.LinkKey)
	Placement    string // the placement's name
	Bidder       string // a well-formed bidder code
	// Dest is the A/B destination a link's click went to, -1 for none.
	// A link's conversion that names none has HasVisitor, and Visitor is
	// its visitor (linkroute.VisitorHash): the link's split tells where
	// that visitor was sent (Lookup.Destination).
	Dest       int8
	Visitor    uint64
	HasVisitor bool
	// KVs are the values of the report keys the event's kv field names
	// (OtherValue past maxKVValues values of a key a day).
	KVs []KeyValue
	// Skipped are why parts of the event are not counted (a malformed
	// ad id, link code, campaign id or placement name).
	Skipped []string
}

// KeyValue is one report key's value of an event.
type KeyValue struct{ Key, Value string }

// Day is the unix second of the start of the event's UTC day.
func (e *Event) Day() int64 { return e.Hour / 86400 * 86400 }

// kvDay is a report key's values on a day (see maxKVValues).
type kvDay struct {
	key string
	day int64
}

// maxKVValues bounds the values of a report key a day a Classifier
// counts apart: the rest count under OtherValue, so that a key sent with
// an id per page cannot grow the report tables without bound.
const maxKVValues = 1000

// OtherValue is the value a report key's events are counted under once
// maxKVValues of its values were seen that day (and a value too long to
// carry).
const OtherValue = "(other)"

// maxAgents bounds the User-Agents a Classifier remembers; past it, it
// starts over (a flood of made-up ones costs classification, never
// memory).
const maxAgents = 4096

// agent is what a User-Agent says of an event: its platform, whether it
// is invalid traffic's (ivt.Agents), and its browser and OS as reports
// name them ("Other" when the parser knows neither).
type agent struct {
	platform    uint8 // index in platforms
	ivt         ivt.Reason
	browser, os string
	device      string // a device type (targeting.Device), "" unknown
}

// Classifier reads what reports count of event lines: the one rule of the
// Tally's rows and of ClickHouse's report columns (package clickhouse).
// It remembers what it read before (User-Agents, referrers' hosts, the
// values of report keys seen each day) and hands out one string per
// value until Forget. It is not safe for concurrent use.
type Classifier struct {
	geo  *geoip.DB
	keys *KeySet
	// kvValues are the values of each report key seen a day (see
	// maxKVValues): the last days'.
	kvValues  map[kvDay]map[string]bool
	codes     map[string]string // interned link keys, names and dimension values
	referrers map[string]string // referrer fields' hosts (see referrer)
	parser    *useragent.Parser
	agents    map[string]agent // what each User-Agent seen is (a few thousand at most)
	// stamp and stampHour remember the hour of the last receivedAt: most
	// lines of a batch are of one hour.
	stamp     [13]byte
	stampHour int64
}

// NewClassifier returns a Classifier that reads countries from geo when
// an event names none (geo may be nil) and counts the values of keys
// (the keys it holds at each line; nil: none).
func NewClassifier(geo *geoip.DB, keys *KeySet) *Classifier {
	c := &Classifier{geo: geo, keys: keys, kvValues: map[kvDay]map[string]bool{}, agents: map[string]agent{}, parser: useragent.NewParser()}
	c.Forget()
	return c
}

// Forget drops the strings handed out so far (a flush's or a batch's
// worth), so that memory stays bounded; the report keys' values seen
// each day are kept.
func (cl *Classifier) Forget() {
	cl.codes, cl.referrers = map[string]string{}, map[string]string{}
}

// Read reads line into e (its slices reused) and returns "" when reports
// count it, else why not ("malformed line", "other type", "no ad, link,
// campaign or placement"). Strings in e are the Classifier's own until
// Forget.
func (cl *Classifier) Read(line []byte, e *Event) string {
	var f eventline.Fields
	if !eventline.Scan(line, &f) {
		return "malformed line"
	}
	return cl.ReadFields(&f, e)
}

// ReadFields is Read of a line already scanned (eventline.Scan) into f.
func (cl *Classifier) ReadFields(f *eventline.Fields, e *Event) string {
	*e = Event{UID: e.UID[:0], KVs: e.KVs[:0], Skipped: e.Skipped[:0], Dest: -1}
	verified := string(f[eventline.Verified]) == "1"
	if !e.CountOf(f[eventline.Type], string(f[eventline.Measured]) == "1", verified) {
		return "other type"
	}
	e.CountMoney(verified, f[eventline.Cost], f[eventline.Attribution], f[eventline.ConvValue], f[eventline.Unbilled], f[eventline.UnbilledCost])
	if e.Errors > 0 {
		code := f[eventline.ErrorCode]
		if len(code) == 0 { // a line of an older version, which named it "code": no link's error
			code = f[eventline.Link]
		}
		f[eventline.Link] = nil
		e.ErrorCode = errorCode(code)
	}
	if len(f[eventline.Ad]) == 0 && len(f[eventline.Link]) == 0 && len(f[eventline.Campaign]) == 0 && len(f[eventline.Placement]) == 0 {
		return "no ad, link, campaign or placement"
	}
	hour, ok := cl.hour(f[eventline.ReceivedAt])
	if !ok {
		return "malformed line"
	}
	e.Hour = hour
	ua := cl.userAgent(f[eventline.UA])
	if len(f[eventline.Attribution]) > 0 {
		// An attributed conversion (the server's field) is its click's
		// or impression's, vouched for by their signed token; its
		// request is often a server's postback, whose User-Agent says
		// nothing of the person (the server wrote its ivt when invalid).
		ua.ivt = ivt.Human
	}
	why := ivt.Parse(f[eventline.IVT]) // the server's word, else the User-Agent's
	if why == ivt.Human {
		why = ua.ivt
	}
	e.Country, e.platform, e.IVT = Country(f[eventline.Country], f[eventline.Geo], f[eventline.IP], cl.geo), ua.platform, why
	if p, ok := platformField(f[eventline.Platform]); ok { // a valid field wins over the User-Agent
		e.platform = platformIndex(p)
	}
	e.Platform = platforms[e.platform]
	e.Browser, e.OS, e.Device = ua.browser, ua.os, ua.device
	if uid := f[eventline.UID]; len(uid) <= MaxUID && e.IVT == ivt.Human {
		e.UID = append(e.UID, uid...)
	}
	if len(f[eventline.Ad]) > 0 {
		if id, ok := adID(f[eventline.Ad]); ok {
			e.Ad = id
		} else {
			e.Skipped = append(e.Skipped, "bad ad id")
		}
	}
	if link := f[eventline.Link]; len(link) > 0 {
		if key, ok := cl.linkKey(link, f[eventline.Domain]); ok {
			e.Link = key
			switch dest := f[eventline.Dest]; {
			case len(dest) == 1 && '0' <= dest[0] && dest[0] <= '9': // an index below marquee.MaxDestinations
				e.Dest = int8(dest[0] - '0')
			case len(dest) == 0 && e.Conversions > 0:
				if ip, err := netip.ParseAddr(string(f[eventline.IP])); err == nil {
					e.Visitor, e.HasVisitor = linkroute.VisitorHash(ip, f[eventline.UA]), true
				}
			}
		} else {
			e.Skipped = append(e.Skipped, "bad link code")
		}
	}
	if len(f[eventline.Campaign]) > 0 {
		if id, ok := adID(f[eventline.Campaign]); ok {
			e.Campaign = id
		} else {
			e.Skipped = append(e.Skipped, "bad campaign id")
		}
	}
	if name := f[eventline.Placement]; len(name) > 0 {
		if marquee.CheckPlacementName(string(name)) == "" {
			e.Placement = cl.intern(name)
			if bidder := f[eventline.Bidder]; len(bidder) > 0 && (marquee.IsBidderCode(bidder) || isPartner(bidder)) {
				e.Bidder = cl.intern(bidder)
			}
		} else {
			e.Skipped = append(e.Skipped, "bad placement name")
		}
	}
	if e.Ad != 0 || e.Link != "" {
		e.Referrer = cl.referrer(f[eventline.Referrer])
	}
	if keys := cl.keys.Load(); len(keys) > 0 && len(f[eventline.KV]) > 0 && (e.Ad != 0 || e.Campaign != 0 || e.Placement != "") {
		e.KVs = cl.kvs(e.KVs, keys, f[eventline.KV], e.Day())
	}
	return ""
}

// errorCodes are the DimError values of the codes VAST defines (100 to
// 999), made once: a report reads a code of an error event without
// allocating.
var errorCodes = func() []string {
	out := make([]string, 1000)
	for i := 100; i < 1000; i++ {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

// errorCode is the DimError value of an error event's code: the code
// when it is one VAST defines, reportrow.NoErrorCode without one, else
// reportrow.OtherErrorCode (a number past VAST's 100–999).
func errorCode(code []byte) string {
	switch {
	case len(code) == 0:
		return reportrow.NoErrorCode
	case len(code) == 3 && '1' <= code[0] && code[0] <= '9' && '0' <= code[1] && code[1] <= '9' && '0' <= code[2] && code[2] <= '9':
		return errorCodes[int(code[0]-'0')*100+int(code[1]-'0')*10+int(code[2]-'0')]
	}
	return reportrow.OtherErrorCode
}

// kvs appends the values of the report keys a kv field names.
func (cl *Classifier) kvs(dst []KeyValue, keys []string, field []byte, day int64) []KeyValue {
	for rest := string(field); rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		key, raw, _ := strings.Cut(pair, "=")
		if !slices.Contains(keys, key) {
			continue
		}
		value, err := url.QueryUnescape(raw)
		if err != nil || value == "" {
			continue
		}
		dst = append(dst, KeyValue{cl.value(key), cl.kvValue(key, day, value)})
	}
	return dst
}

// kvValue is value, interned, or OtherValue once maxKVValues other values
// of key were seen on day.
func (cl *Classifier) kvValue(key string, day int64, value string) string {
	kd := kvDay{key, day}
	seen := cl.kvValues[kd]
	if seen == nil {
		for old := range cl.kvValues { // a few days' sets at most
			if old.day < day-2*86400 {
				delete(cl.kvValues, old)
			}
		}
		seen = map[string]bool{}
		cl.kvValues[kd] = seen
	}
	if !seen[value] {
		if len(seen) >= maxKVValues {
			return OtherValue
		}
		seen[value] = true
	}
	return cl.value(value)
}

// linkKey is the interned marquee.LinkKey of an event's link code and
// domain, if both are well formed.
func (cl *Classifier) linkKey(code, domain []byte) (string, bool) {
	if !marquee.CodeShaped(code) {
		return "", false
	}
	if len(domain) == 0 {
		return cl.intern(code), true
	}
	d, msg := marquee.NormDomain(string(domain))
	if msg != "" {
		return "", false
	}
	return cl.intern([]byte(marquee.LinkKey(d, string(code)))), true
}

// intern returns name as a string, one string per name.
func (cl *Classifier) intern(name []byte) string {
	s, ok := cl.codes[string(name)]
	if !ok {
		s = string(name)
		cl.codes[s] = s
	}
	return s
}

// value returns a dimension's value interned.
func (cl *Classifier) value(s string) string {
	if v, ok := cl.codes[s]; ok {
		return v
	}
	cl.codes[s] = s
	return s
}

// referrer is the interned ReferrerHost of an event's referrer field,
// remembered by the field's bytes until Forget.
func (cl *Classifier) referrer(field []byte) string {
	if len(field) == 0 {
		return Direct
	}
	if h, ok := cl.referrers[string(field)]; ok {
		return h
	}
	h := cl.value(ReferrerHost(field))
	if len(cl.referrers) < maxAgents {
		cl.referrers[string(field)] = h
	}
	return h
}

// hour returns the unix second of the start of receivedAt's UTC hour.
func (cl *Classifier) hour(receivedAt []byte) (int64, bool) {
	utc := len(receivedAt) == 30 && receivedAt[29] == 'Z' // as the collector writes it
	if utc && cl.stampHour != 0 && string(receivedAt[:13]) == string(cl.stamp[:]) {
		return cl.stampHour, true
	}
	h, ok := eventline.Hour(receivedAt)
	if ok && utc {
		copy(cl.stamp[:], receivedAt)
		cl.stampHour = h
	}
	return h, ok
}

// userAgent classifies ua, from memory when it was seen before (most
// events come from a few thousand User-Agents).
func (cl *Classifier) userAgent(ua []byte) agent {
	if a, ok := cl.agents[string(ua)]; ok {
		return a
	}
	a := agent{platform: platformIndex(Platform(nil, ua)), ivt: ivt.DefaultAgents().Reason(ua), browser: Other, os: Other}
	p := cl.parser.Parse(string(ua))
	if p.Browser() != "" {
		a.browser = string(p.Browser())
	}
	if p.OS() != "" {
		a.os = string(p.OS())
	}
	if len(ua) > 0 {
		a.device, _, _ = targeting.Device(string(ua))
	}
	if len(cl.agents) >= maxAgents {
		clear(cl.agents)
	}
	cl.agents[string(ua)] = a
	return a
}

// found is what a Lookup found of an entity an event names.
type found struct {
	id, parent int64 // parent: a campaign's advertiser
	ok         bool
	dests      []marquee.Destination // a link's
}

// Lookup tells which of the entities events name exist (events naming
// others are not counted for them), asking its Resolver once an entity
// in its life: a Tally's flush's, or a batch's of package clickhouse.
// It is not safe for concurrent use.
type Lookup struct {
	res  Resolver
	seen map[rkey]found // by entity and id or name; day 0
}

// NewLookup returns a Lookup asking res.
func NewLookup(res Resolver) *Lookup { return &Lookup{res: res, seen: map[rkey]found{}} }

// known returns what exists of an ad, link (code: its key), campaign or
// placement (code: its name).
func (l *Lookup) known(ctx context.Context, entity byte, id int64, code string) (found, error) {
	k := rkey{entity: entity, id: id, code: code}
	if f, ok := l.seen[k]; ok {
		return f, nil
	}
	f := found{id: id}
	var err error
	switch entity {
	case entAd:
		f.ok, err = l.res.AdExists(ctx, id)
	case entLink:
		var lk marquee.Link
		lk, f.ok, err = l.res.Link(ctx, code)
		f.id, f.dests = lk.ID, lk.Destinations
	case entCampaign:
		f.parent, f.ok, err = l.res.CampaignAdvertiser(ctx, id)
	case entPlacement:
		f.id, f.ok, err = l.res.PlacementID(ctx, code)
	}
	if err != nil {
		return f, err
	}
	l.seen[k] = f
	return f, nil
}

// Resolved are an event's entities that exist, by id (0 for none, and
// for one that does not exist), as reports count it.
type Resolved struct {
	Ad, Campaign, Advertiser, Placement, Link int64
	// Dest is the A/B destination of a link's click, or of its
	// conversion by the visitor the link's split sent there; -1 none.
	Dest int
	// Cube says the event counts in reports by several dimensions: each
	// ad, campaign and placement it names exists (and it names one).
	Cube bool
}

// Resolve tells which of e's entities exist.
func (l *Lookup) Resolve(ctx context.Context, e *Event) (Resolved, error) {
	r := Resolved{Dest: -1, Cube: e.Ad != 0 || e.Campaign != 0 || e.Placement != ""}
	for _, ent := range [...]struct {
		entity byte
		id     int64
		code   string
	}{{entAd, e.Ad, ""}, {entLink, 0, e.Link}, {entCampaign, e.Campaign, ""}, {entPlacement, 0, e.Placement}} {
		if ent.id == 0 && ent.code == "" {
			continue
		}
		f, err := l.known(ctx, ent.entity, ent.id, ent.code)
		if err != nil {
			return r, err
		}
		if !f.ok {
			r.Cube = r.Cube && ent.entity == entLink // a link is not the cube's
			continue
		}
		switch ent.entity {
		case entAd:
			r.Ad = f.id
		case entLink:
			r.Link, r.Dest = f.id, int(e.Dest)
			if e.HasVisitor && len(f.dests) > 0 {
				r.Dest = linkroute.Pick(f.dests, linkroute.Sticky(f.id, e.Visitor))
			}
		case entCampaign:
			r.Campaign, r.Advertiser = f.id, f.parent
		case entPlacement:
			r.Placement = f.id
		}
	}
	return r, nil
}

// isPartner says whether bidder is a demand partner's (marquee.PartnerOf).
func isPartner(bidder []byte) bool {
	_, ok := marquee.PartnerOf(bidder)
	return ok
}
