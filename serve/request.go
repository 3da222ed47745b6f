// The decision request: read from a JSON body (or, by the edge, from a
// GET's query), checked against the plan, and its viewer compiled once
// (targeting.Viewer).

package serve

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"marquee"
	"marquee/delivery"
	"marquee/privacy"
	"marquee/targeting"
)

// Input is a decision request as sent (a JSON body, or a GET's
// parameters). Its byte slices point into the request or the parser that
// read it: valid until the answer is written.
type Input struct {
	Placements []SlotInput
	UserKey    []byte // empty: no user
	Age        OptInt
	Gender     []byte
	Country    []byte
	Platform   []byte
	Keywords   [][]byte
	URL        []byte
	// KV are the page's key-values as sent; Referrer, Region, City, Metro
	// and Language what the request says of them (else the server finds
	// what it can: the Referer header, Accept-Language).
	KV                                  []RawKV
	Referrer, Region, City, Metro, Lang []byte
	// IP and UserAgent are the viewer's, when a server-to-server client
	// decides for one (as Kevel's decision API takes them); else the
	// request's own are the viewer's.
	IP        []byte
	UserAgent []byte
	// GDPR, TCF and Given are what consent says: whether GDPR applies
	// (privacy.ParseGDPR), the TCF v2 string, the publisher's own word.
	GDPR  int8
	TCF   []byte
	Given privacy.Said
	// GPP and GPPSID are a Global Privacy Platform string and the ids of
	// its sections that apply; USP a US Privacy string.
	GPP, GPPSID, USP []byte
	Explain          bool
	Preview          bool
	// Webdriver: the page's script found navigator.webdriver set (the
	// tag's "webdriver": true; wd=1): a browser under automation.
	Webdriver bool
	// At is the time a preview decides at ("" now): ad operations ask
	// how a day-part will serve.
	At []byte
}

// text is where the request's string field name goes (nil: name is not
// one): the viewer's, the page's and the preview's fields the body and
// the query name alike.
func (in *Input) text(name string) *[]byte {
	switch name {
	case "gender":
		return &in.Gender
	case "country":
		return &in.Country
	case "platform":
		return &in.Platform
	case "url":
		return &in.URL
	case "referrer":
		return &in.Referrer
	case "region":
		return &in.Region
	case "city":
		return &in.City
	case "metro":
		return &in.Metro
	case "language":
		return &in.Lang
	case "ip":
		return &in.IP
	case "userAgent":
		return &in.UserAgent
	case "at":
		return &in.At
	}
	return nil
}

// QueryTexts are the string fields a GET decision takes as parameters.
var QueryTexts = []string{"gender", "country", "platform", "url", "referrer", "region", "city", "metro", "language"}

// Text is where the request's string field name goes (nil: name is not
// one of them).
func (in *Input) Text(name string) *[]byte { return in.text(name) }

// QueryKV is a page's key-value pair as a GET's parameter kv.KEY=VALUE
// sends it.
func QueryKV(key, value []byte) RawKV { return RawKV{Key: key, Value: value, parent: "kv", index: -1} }

// SlotInput is one slot of a request:
// {"div","placement","count","podDurationMs","kv"}.
type SlotInput struct {
	Div, Placement []byte
	Count          OptInt
	PodMs          OptInt // podDurationMs
	KV             []RawKV
	Bids           []delivery.Bid // the page's header-bidding bids (readBids)
}

// RawKV is a key-value pair as sent, where (parent, and its place in
// an array of the key's values, -1 for a single value), and once checked,
// normalised.
type RawKV struct {
	Key, Value []byte
	parent     string
	index      int
	kv         targeting.KV
	checked    bool
}

// path names the pair in problems: "kv.section", "placements[0].kv.tags[1]".
func (kv *RawKV) path() string {
	at := kv.parent + "." + string(kv.Key)
	if kv.index >= 0 {
		at += "[" + strconv.Itoa(kv.index) + "]"
	}
	return at
}

// OptInt is an integer a request may leave out.
type OptInt struct {
	N   int
	Set bool
}

// A Scratch is what reading one decision request needs and a
// request can hand to the next: the parser (fastjson: encoding/json's
// reflection was a fifth of a decision's cost) and the slots and bids it
// reads into. The request's input points into it until its answer is
// written; then it goes back to scratches, emptied.
type Scratch struct {
	jp    fastjson.Parser
	slots []SlotInput
	bids  []delivery.Bid
}

var scratches = sync.Pool{New: func() any { return new(Scratch) }}

// GetScratch returns a pooled Scratch; Release it after the answer.
func GetScratch() *Scratch { return scratches.Get().(*Scratch) }

// Release empties sc (nothing of the request's is kept) and pools it.
func (sc *Scratch) Release() {
	clear(sc.slots)
	clear(sc.bids)
	sc.slots, sc.bids = sc.slots[:0], sc.bids[:0]
	scratches.Put(sc)
}

// slotPaths name the slots of a request in its problems.
var slotPaths = func() (out [MaxSlots + 1]string) {
	for i := range out {
		out[i] = "placements[" + strconv.Itoa(i) + "]"
	}
	return out
}()

// problems collects a request's problems; its map is made at the first.
type problems struct{ m marquee.Problems }

func (p *problems) add(field, problem string) {
	if p.m == nil {
		p.m = marquee.Problems{}
	}
	p.m[field] = problem
}

// ReadDecision reads a decision request's JSON body into in with sc,
// which in's slices then point into (release sc after the answer),
// naming every field of the wrong type; fields it does not know are
// ignored.
func ReadDecision(sc *Scratch, body []byte, in *Input) error {
	v, err := sc.jp.ParseBytes(body)
	if err == nil && v.Type() != fastjson.TypeObject {
		err = errors.New("not an object")
	}
	if err != nil {
		return marquee.Invalid("invalid decision request", marquee.Problems{"body": "must be a JSON object: " + err.Error()})
	}
	var p problems
	str := func(v *fastjson.Value, path, field string) []byte {
		b, err := v.StringBytes()
		if err != nil {
			p.add(path+field, "must be a string")
		}
		return b
	}
	integer := func(v *fastjson.Value, path, field string) OptInt {
		n, err := v.Int()
		if err != nil {
			p.add(path+field, "must be an integer")
		}
		return OptInt{n, err == nil}
	}
	o, _ := v.Object()
	o.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "placements":
			slots, err := v.Array()
			if err != nil {
				p.add("placements", "must be an array of slots")
			}
			if len(slots) > MaxSlots { // refused before any slot is read
				p.add("placements", fmt.Sprintf("must hold at most %d slots", MaxSlots))
				in.Placements = nil
				return
			}
			in.Placements = sc.slots[:0]
			for i, sv := range slots {
				var slot SlotInput
				path := slotPaths[min(i, MaxSlots)] // past MaxSlots, the request is refused anyway
				so, err := sv.Object()
				if err != nil {
					p.add(path, `must be an object {"div","placement","count"}`)
				}
				so.Visit(func(k []byte, v *fastjson.Value) {
					switch string(k) {
					case "div":
						slot.Div = str(v, path, ".div")
					case "placement":
						slot.Placement = str(v, path, ".placement")
					case "count":
						slot.Count = integer(v, path, ".count")
					case "podDurationMs":
						slot.PodMs = integer(v, path, ".podDurationMs")
					case "kv":
						slot.KV = readKV(v, path+".kv", slot.KV, &p)
					case "bids":
						n := len(sc.bids)
						sc.bids = readBids(sc.bids, v, path, &p)
						slot.Bids = sc.bids[n:len(sc.bids):len(sc.bids)]
					}
				})
				in.Placements = append(in.Placements, slot)
			}
			sc.slots = in.Placements
		case "user":
			if key := v.Get("key"); v.Type() != fastjson.TypeObject && v.Type() != fastjson.TypeNull {
				p.add("user", `must be an object {"key"}`)
			} else if key != nil {
				in.UserKey = str(key, "user", ".key")
			}
		case "age":
			in.Age = integer(v, "", "age")
		case "kv":
			in.KV = readKV(v, "kv", in.KV, &p)
		case "keywords":
			kws, err := v.Array()
			if err != nil {
				p.add("keywords", "must be an array of strings")
			}
			for i, kv := range kws {
				in.Keywords = append(in.Keywords, str(kv, "keywords", "["+strconv.Itoa(i)+"]"))
			}
		case "consent":
			readConsent(v, in, &p)
		case "explain", "preview", "webdriver":
			b, err := v.Bool()
			if err != nil {
				p.add(string(k), "must be true or false")
			}
			switch k[0] {
			case 'e':
				in.Explain = b
			case 'p':
				in.Preview = b
			default:
				in.Webdriver = b
			}
		default:
			if dst := in.text(string(k)); dst != nil {
				*dst = str(v, "", string(k))
			}
		}
	})
	return marquee.Invalid("invalid decision request", p.m)
}

// MaxBids is how many header-bidding bids a slot may carry.
const MaxBids = 20

// maxBidCPM bounds a bid's CPM, in the install's currency.
const maxBidCPM = 10_000

// readBids appends to out the "bids" of the slot at path —
// [{"bidder","cpm","currency","adId","size","dealId"}], Prebid's bid
// responses — checked: a bidder
// (1 to 64 of A–Z, a–z, 0–9, _ . -), a CPM from 0 to 10,000, an ad id (1
// to 128 bytes: what renders the bid), and optionally a currency (three
// capital letters), a size ("300x250") and a deal id (1 to 128 bytes).
// Bidders, currencies, sizes and deals repeat from request to request:
// they are interned, each field's in a table of its own (a string seen
// before was checked then); an ad id stays the request's bytes.
func readBids(out []delivery.Bid, v *fastjson.Value, slot string, p *problems) []delivery.Bid {
	path := func(i int) string { return slot + ".bids[" + strconv.Itoa(i) + "]" } // made for a problem only
	arr, err := v.Array()
	switch {
	case err != nil:
		p.add(slot+".bids", `must be an array of bids [{"bidder","cpm","currency","adId","size"}]`)
		return out
	case len(arr) > MaxBids:
		p.add(slot+".bids", fmt.Sprintf("must hold at most %d bids", MaxBids))
		return out
	}
	for i, bv := range arr {
		o, err := bv.Object()
		if err != nil {
			p.add(path(i), `must be an object {"bidder","cpm","currency","adId","size"}`)
			continue
		}
		var b delivery.Bid
		var bad string // the first field in error
		cpm := false
		o.Visit(func(k []byte, f *fastjson.Value) {
			if bad != "" || f.Type() == fastjson.TypeNull {
				return
			}
			str := func(in *interner) string {
				raw, err := f.StringBytes()
				v, ok := in.of(raw)
				if err != nil || !ok {
					bad = string(k)
				}
				return v
			}
			switch string(k) {
			case "bidder":
				b.Bidder = str(bidders)
			case "adId":
				id, err := f.StringBytes()
				if err != nil || len(id) == 0 || len(id) > 128 || !printable(id) {
					bad = "adId"
				}
				b.AdID = id
			case "currency":
				b.Currency = str(currencies)
			case "size":
				b.Size = str(sizes)
			case "dealId":
				b.Deal = str(deals)
			case "cpm":
				x, err := f.Float64()
				if err != nil || x < 0 || x > maxBidCPM || math.IsNaN(x) {
					bad = "cpm"
				}
				b.CPM, cpm = int64(math.Round(x*1e6)), true
			}
		})
		switch {
		case bad != "":
			p.add(path(i)+"."+bad, bidProblems[bad])
		case b.Bidder == "":
			p.add(path(i)+".bidder", "is required")
		case len(b.AdID) == 0:
			p.add(path(i)+".adId", "is required: the ad id Prebid renders the bid by")
		case !cpm:
			p.add(path(i)+".cpm", "is required")
		}
		out = append(out, b)
	}
	return out
}

// bidProblems are what is wrong with a bid's field.
var bidProblems = map[string]string{
	"bidder":   "must be a bidder's code: 1 to 64 of A–Z, a–z, 0–9, _ . -",
	"adId":     "must be Prebid's ad id: 1 to 128 printable characters",
	"currency": "must be a currency code of three capital letters (ISO 4217)",
	"size":     `must be a size "WIDTHxHEIGHT" (e.g. "300x250")`,
	"dealId":   "must be 1 to 128 printable characters",
	"cpm":      fmt.Sprintf("must be a number from 0 to %d (the CPM in the currency)", maxBidCPM),
}

// The tables of the strings bids repeat, each field's own.
var (
	bidders    = newInterner(marquee.MaxBidderLen, marquee.IsBidderCode[[]byte])
	currencies = newInterner(3, currencyCode)
	sizes      = newInterner(11, marquee.IsSize[[]byte])
	deals      = newInterner(128, printable)
)

// maxInterned is the most strings a table keeps; past it a string is
// made each time.
const maxInterned = 4096

// An interner keeps the valid strings of one field of bids (1 to max
// bytes that valid accepts): a string met before is found by the
// request's bytes with no lock, no check and no allocation (the map is
// replaced, never changed, under mu: new strings are rare). A string in
// error is never kept: the table holds what bids repeat, not what a
// malformed request makes up.
type interner struct {
	m     atomic.Pointer[map[string]string]
	mu    sync.Mutex
	max   int
	valid func([]byte) bool
}

func newInterner(max int, valid func([]byte) bool) *interner {
	in := &interner{max: max, valid: valid}
	in.m.Store(&map[string]string{})
	return in
}

// of is b as a string, interned, and whether b is valid ("" and false
// when it is not).
func (in *interner) of(b []byte) (string, bool) {
	if s, ok := (*in.m.Load())[string(b)]; ok {
		return s, true
	}
	if len(b) == 0 || len(b) > in.max || !in.valid(b) {
		return "", false
	}
	s := string(b)
	in.mu.Lock()
	defer in.mu.Unlock()
	old := *in.m.Load()
	if len(old) < maxInterned {
		m := make(map[string]string, len(old)+1)
		maps.Copy(m, old)
		m[s] = s
		in.m.Store(&m)
	}
	return s, true
}

// printable: valid UTF-8 without control characters (ASCII checked byte
// by byte, the rest by runes).
func printable(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= 0x7f {
			return utf8.Valid(s) && !bytes.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
		}
	}
	return true
}

func currencyCode(s []byte) bool {
	return len(s) == 3 && !bytes.ContainsFunc(s, func(r rune) bool { return r < 'A' || r > 'Z' })
}

// readKV appends the key-values of a body's "kv" object at path to kvs,
// checked: each value a string, a number or an array of them.
func readKV(v *fastjson.Value, path string, kvs []RawKV, p *problems) []RawKV {
	o, err := v.Object()
	if err != nil {
		p.add(path, `must be an object {"key": "value" or ["values"]}`)
		return kvs
	}
	o.Visit(func(k []byte, f *fastjson.Value) {
		one := func(f *fastjson.Value, index int) {
			kv := RawKV{Key: k, parent: path, index: index}
			switch f.Type() {
			case fastjson.TypeString:
				kv.Value = f.GetStringBytes()
			case fastjson.TypeNumber:
				kv.Value = f.MarshalTo(nil)
			default:
				p.add(kv.path(), "must be a string, a number, or an array of them")
				return
			}
			if kv.check(p) {
				kvs = append(kvs, kv)
			}
		}
		if f.Type() == fastjson.TypeArray {
			for i, e := range f.GetArray() {
				one(e, i)
			}
			return
		}
		one(f, -1)
	})
	return kvs
}

// check normalises the pair (marquee.KVKey, marquee.KVValue) into kv.kv,
// or names what is wrong with it.
func (kv *RawKV) check(p *problems) bool {
	k, okK := marquee.KVKey(string(kv.Key))
	v, okV := marquee.KVValue(string(kv.Value))
	switch {
	case !okK:
		p.add(kv.path(), fmt.Sprintf("key must be 1 to %d bytes of a-z, 0-9, _, . and -", marquee.MaxKVKeyLen))
	case !okV:
		p.add(kv.path(), fmt.Sprintf("must be 1 to %d bytes without control characters", marquee.MaxKVValueLen))
	}
	kv.kv, kv.checked = targeting.KV{Key: k, Value: v}, true
	return okK && okV
}

// compileKV checks and normalises the pairs of kvs into out (sorted),
// naming every problem; at most marquee.MaxKVPairs.
func compileKV(kvs []RawKV, out []targeting.KV, p *problems) []targeting.KV {
	for i := range kvs {
		if kv := &kvs[i]; kv.checked || kv.check(p) {
			out = append(out, kv.kv)
		}
	}
	if len(out) > marquee.MaxKVPairs {
		p.add(kvs[0].parent, fmt.Sprintf("must hold at most %d key-value pairs", marquee.MaxKVPairs))
	}
	targeting.SortKVs(out)
	return out
}

// slotKV is the page's key-values with a slot's: the slot's replace the
// page's of the same key.
func slotKV(page, slot []targeting.KV) []targeting.KV {
	out := slices.Clone(slot)
	for _, kv := range page {
		if !slices.ContainsFunc(slot, func(s targeting.KV) bool { return s.Key == kv.Key }) {
			out = append(out, kv)
		}
	}
	targeting.SortKVs(out)
	return out
}

// readConsent reads a body's "consent": {"gdpr": 1|0|true|false, "tcf":
// "<TCF v2 string>", "given": true|false, "gpp": "<GPP string>",
// "gppSid": [7, 8] or "7,8", "usp": "<US Privacy string>"}.
func readConsent(v *fastjson.Value, in *Input, p *problems) {
	o, err := v.Object()
	if err != nil {
		p.add("consent", `must be an object {"gdpr","tcf","given","gpp","gppSid","usp"}`)
		return
	}
	o.Visit(func(k []byte, f *fastjson.Value) {
		switch string(k) {
		case "gdpr":
			switch f.Type() {
			case fastjson.TypeTrue:
				in.GDPR = 1
			case fastjson.TypeFalse:
				in.GDPR = 0
			case fastjson.TypeNumber:
				if n, err := f.Int(); err == nil && (n == 0 || n == 1) {
					in.GDPR = int8(n)
					return
				}
				p.add("consent.gdpr", "must be 0, 1, true or false")
			default:
				p.add("consent.gdpr", "must be 0, 1, true or false")
			}
		case "tcf":
			b, err := f.StringBytes()
			if err != nil {
				p.add("consent.tcf", "must be a string")
			}
			in.TCF = b
		case "gpp", "usp":
			b, err := f.StringBytes()
			if err != nil {
				p.add("consent."+string(k), "must be a string")
			}
			if string(k) == "gpp" {
				in.GPP = b
			} else {
				in.USP = b
			}
		case "gppSid":
			switch f.Type() {
			case fastjson.TypeString:
				in.GPPSID, _ = f.StringBytes()
			case fastjson.TypeArray:
				var sid []byte
				for i, n := range f.GetArray() {
					id, err := n.Int()
					if err != nil || id < 0 || id > 64 {
						p.add("consent.gppSid", "must be an array of GPP section ids (7, 8, …) or a string of them (\"7,8\")")
						return
					}
					if i > 0 {
						sid = append(sid, ',')
					}
					sid = strconv.AppendInt(sid, int64(id), 10)
				}
				in.GPPSID = sid
			default:
				p.add("consent.gppSid", "must be an array of GPP section ids (7, 8, …) or a string of them (\"7,8\")")
			}
		case "given":
			switch f.Type() {
			case fastjson.TypeTrue:
				in.Given = privacy.Yes
			case fastjson.TypeFalse:
				in.Given = privacy.No
			default:
				p.add("consent.given", "must be true or false")
			}
		default:
			p.add("consent."+string(k), "is not a field of consent (gdpr, tcf, given, gpp, gppSid, usp)")
		}
	})
}

// parseDecision checks a request against the plan, every problem named,
// and returns it in the engine's words (its strings the plan's own where
// it can: no copy of a placement, country or platform name).
func parseDecision(in *Input, plan *delivery.Plan, slots []delivery.Slot) (delivery.Request, error) {
	var p problems
	r := delivery.Request{Slots: slots[:0]}
	switch n := len(in.Placements); {
	case n == 0:
		p.add("placements", `is required: the slots to fill, [{"div","placement","count"}]`)
	case n > MaxSlots:
		p.add("placements", fmt.Sprintf("must hold at most %d slots", MaxSlots))
	}
	for i, s := range in.Placements {
		path := slotPaths[min(i, MaxSlots)]
		var name string
		if pl, ok := plan.Placement(string(s.Placement)); ok {
			name = pl.Name
		} else {
			name = string(s.Placement)
			p.add(path+".placement", fmt.Sprintf("no placement %q", s.Placement))
		}
		div := name
		if len(s.Div) > 0 && !bytes.Equal(s.Div, s.Placement) {
			div = string(s.Div)
		}
		switch {
		case div == "" || len(div) > 64:
			p.add(path+".div", "must be 1 to 64 characters (default: the placement's name)")
		case slices.ContainsFunc(r.Slots, func(s delivery.Slot) bool { return s.Div == div }):
			p.add(path+".div", fmt.Sprintf("%q names two slots", div))
		}
		count := 1
		if s.Count.Set {
			if count = s.Count.N; count < 1 || count > MaxSlotCount {
				p.add(path+".count", fmt.Sprintf("must be from 1 to %d", MaxSlotCount))
			}
		}
		pod := 0
		if s.PodMs.Set {
			if pod = s.PodMs.N; pod < 0 || pod > marquee.MaxPod*marquee.MaxVideoMs {
				p.add(path+".podDurationMs", fmt.Sprintf("must be the most the slot's video ads may last together, in milliseconds: 0 (no limit) to %d", marquee.MaxPod*marquee.MaxVideoMs))
			}
		}
		r.Slots = append(r.Slots, delivery.Slot{Div: div, Placement: name, Count: count, PodMs: pod, Bids: s.Bids})
	}
	if len(in.KV) > 0 {
		r.Viewer.KV = compileKV(in.KV, nil, &p)
	}
	for i, s := range in.Placements {
		if len(s.KV) > 0 && i < len(r.Slots) {
			r.Slots[i].KV = slotKV(r.Viewer.KV, compileKV(s.KV, nil, &p))
		}
	}
	// The viewer is compiled here, once: delivery matches its codes.
	if in.Age.Set {
		if r.Viewer.Age = in.Age.N; r.Viewer.Age < marquee.MinAge || r.Viewer.Age > marquee.MaxAge {
			p.add("age", fmt.Sprintf("must be an integer between %d and %d", marquee.MinAge, marquee.MaxAge))
		}
	}
	if len(in.Gender) > 0 {
		if r.Viewer.Gender = targeting.GenderCode(in.Gender); r.Viewer.Gender == 0 {
			p.add("gender", fmt.Sprintf(`must be "M" or "F", got %q`, in.Gender))
		}
	}
	if len(in.Country) > 0 {
		if slot, ok := marquee.CountrySlot(in.Country); ok {
			r.Viewer.Country = slot + 1
		} else {
			p.add("country", fmt.Sprintf("unknown ISO 3166-1 alpha-2 code %q", in.Country))
		}
	}
	if len(in.Platform) > 0 {
		if r.Viewer.Platform = targeting.PlatformCode(in.Platform); r.Viewer.Platform == 0 {
			p.add("platform", marquee.PlatformProblem(string(in.Platform)))
		}
	}
	if len(in.Keywords) > marquee.MaxKeywords {
		p.add("keywords", fmt.Sprintf("must hold at most %d keywords", marquee.MaxKeywords))
	}
	for _, k := range in.Keywords {
		r.Keywords = append(r.Keywords, strings.ToLower(string(bytes.TrimSpace(k))))
	}
	if key := in.UserKey; len(key) > MaxUserKey {
		p.add("user.key", fmt.Sprintf("must be at most %d bytes", MaxUserKey))
	}
	return r, marquee.Invalid("invalid decision request", p.m)
}

// viewerIP is the viewer's address: the body's ip, else the edge's (its
// client's).
func viewerIP(e *Edge, in *Input) (netip.Addr, error) {
	if len(in.IP) > 0 {
		a, err := netip.ParseAddr(string(in.IP))
		if err != nil {
			return a, marquee.Invalid("invalid decision request", marquee.Problems{"ip": "must be an IPv4 or IPv6 address"})
		}
		return a.Unmap(), nil
	}
	return e.IP, nil
}

// viewerUA is the viewer's User-Agent: the body's userAgent, else the
// edge's.
func viewerUA(e *Edge, in *Input) []byte {
	if len(in.UserAgent) > 0 {
		return in.UserAgent
	}
	return e.UserAgent
}

// request is a decision request checked against the plan
// (parseDecision), its user the pseudonym of its key at now — none when
// the request's consent (its body's or parameters', and Sec-GPC) says
// the visitor is not to be followed, which lim says.
func (s *Service) request(e *Edge, in *Input, plan *delivery.Plan, slots []delivery.Slot, now time.Time) (r delivery.Request, v, signals privacy.Verdict, err error) {
	if r, err = parseDecision(in, plan, slots); err != nil {
		return r, v, v, err
	}
	if err = s.fillViewer(e, in, &r.Viewer, plan.Needs()); err != nil {
		return r, v, v, err
	}
	pol := s.lines.privacy
	v = pol.Decide(privacy.Signal{GPC: e.GPC, GDPR: in.GDPR, TCF: in.TCF, Given: in.Given, GPP: in.GPP, GPPSID: in.GPPSID, USP: in.USP,
		Child: s.sites.childDirected(plan, &r)})
	signals = v
	if rules := pol.Rules(); rules != nil {
		c := privacy.Context{Component: privacy.Marquee, Country: r.Viewer.CountryCode(), Sections: v.Sections}
		if len(r.Slots) > 0 {
			if pl, ok := plan.Placement(r.Slots[0].Placement); ok {
				c.Site = pl.Site
			}
		}
		rules.Apply(&v, c)
	}
	r.User = pol.User(in.UserKey, now, v.Limit)
	return r, v, signals, nil
}

// fillViewer fills what the request leaves out of its viewer from the
// viewer's address and User-Agent — the body's ip and userAgent, else the
// request's own (its client's address through the trusted proxies): the
// country from GeoIP (-geoip), the platform from the User-Agent; and,
// where the plan's targeting trees read them (needs), the page's host and
// path (url, else the Referer header), the referrer's host, the device,
// browser and OS (the User-Agent, parsed), the language (language, else
// Accept-Language), the address, and region, city and metro as sent. What
// stays unknown matches no targeting of it (targeting fails closed).
func (s *Service) fillViewer(e *Edge, in *Input, v *targeting.Viewer, needs targeting.Needs) error {
	ip, err := viewerIP(e, in)
	if err != nil {
		return err
	}
	geo := s.lines.geo
	if v.Country == 0 && geo != nil || needs&targeting.NeedIP != 0 {
		if v.Country == 0 && geo != nil {
			v.SetCountry(geo.Country(ip))
		}
		if needs&targeting.NeedIP != 0 {
			v.IP = ip
		}
	}
	ua := viewerUA(e, in)
	if v.Platform == 0 && len(bytes.TrimSpace(ua)) > 0 {
		v.Platform = targeting.PlatformCode(marquee.UAPlatform(ua))
	}
	if needs == 0 {
		return nil
	}
	if needs&targeting.NeedPage != 0 {
		page := in.URL
		if len(page) == 0 {
			page = e.Referer
		}
		v.Host, v.Path = hostPath(page)
	}
	if needs&targeting.NeedReferrer != 0 {
		v.Referrer, _ = hostPath(in.Referrer)
	}
	if needs&targeting.NeedDevice != 0 && len(ua) > 0 {
		v.Device, v.Browser, v.OS = targeting.Device(string(ua))
	}
	if needs&targeting.NeedLanguage != 0 {
		lang := in.Lang
		if len(lang) == 0 {
			lang = e.AcceptLanguage
		}
		v.Language = targeting.PrimaryLanguage(string(lang))
	}
	if needs&targeting.NeedGeo != 0 {
		v.Region = strings.ToUpper(strings.TrimSpace(string(in.Region)))
		v.City = strings.ToLower(strings.TrimSpace(string(in.City)))
		v.Metro = strings.TrimSpace(string(in.Metro))
		if pl, ok := geo.(Placer); ok && (v.Region == "" || v.City == "" || v.Metro == "") {
			region, city, metro := pl.Place(ip)
			v.Region, v.City, v.Metro = cmp.Or(v.Region, region), cmp.Or(v.City, city), cmp.Or(v.Metro, metro)
		}
	}
	return nil
}

// hostPath reads a page's URL: its host name, lower case, and its path
// ("" and "" when it is not an http or https URL).
func hostPath(raw []byte) (host, path string) {
	u, err := url.Parse(string(raw))
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return "", ""
	}
	return strings.ToLower(u.Hostname()), cmp.Or(u.EscapedPath(), "/")
}
