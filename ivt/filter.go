package ivt

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/maphash"
	"math"
	"net/netip"
	"sync"
	"time"
)

// Config is what a Filter is made of. Zero thresholds take the defaults
// (Default*); a negative one turns its rule off.
type Config struct {
	// Agents classifies User-Agents (nil: DefaultAgents).
	Agents *Agents
	// Ranges are the data-centre ranges (nil: none).
	Ranges *Ranges
	// MinClickDelay: a click sooner than this after its impression was
	// counted is FastClick.
	MinClickDelay time.Duration
	// MinConversionDelay: a conversion sooner than this after its click
	// is FastConversion.
	MinConversionDelay time.Duration
	// UserEvents and AddressEvents are the events a user (by its key) and
	// an address may make in a minute; past them, Velocity.
	UserEvents, AddressEvents int
	// IPv6Prefix is how many leading bits of an IPv6 address the address
	// rules key on (DefaultIPv6Prefix; 56 where networks hand their
	// subscribers /56s): a client's /64 is one address, as an IPv4
	// address is. 32 to 128.
	IPv6Prefix int
	// CampaignClicks is how many clicks of one campaign an address may
	// make in an hour; past them, ClickLimit.
	CampaignClicks int
	// ClickRateMin and MaxClickRate: an address whose clicks in an hour
	// are at least ClickRateMin and more than MaxClickRate of its verified
	// impressions is ClickRate, and what its clicks were billed that hour
	// is credited.
	ClickRateMin int
	MaxClickRate float64
	// Shared are the velocity counts every instance adds to (nil: each
	// instance counts alone): Sync sends this instance's and learns the
	// others'.
	Shared SharedCounts
}

// SharedCounts keep counts that every instance adds to (package counters'
// Redis: -counters redis://…).
type SharedCounts interface {
	// AddCounts adds each count's Delta to the total of its Window, Minute
	// and Key, and sets its Total to that total after the add.
	AddCounts(ctx context.Context, counts []Count) error
}

// Count is an instance's events of one key in one minute not yet shared
// (Delta), and, once shared, every instance's (Total).
type Count struct {
	Window byte // 'u' users, 'a' addresses
	Minute int64
	Key    uint64
	Delta  int64
	Total  int64
	own    int32 // this instance's count of the key, Delta included
}

// Filter tells invalid traffic from people's: what a request says of
// itself and where it comes from (Request), and how fast its user and
// address make events (Count). It is safe for concurrent use.
type Filter struct {
	agents                          *Agents
	ranges                          *Ranges
	minClick, minConversion         time.Duration
	users, addresses                *window
	maxUserEvents, maxAddressEvents int32
	v6bits                          int
	// By address and hour: clicks of a campaign, impressions, clicks.
	campaignClicks, impressions, clicks *window
	maxCampaignClicks, clickRateMin     int32
	maxClickRate                        float64
	seed                                maphash.Seed
	shared                              SharedCounts
	syncBuf                             []Count // Sync's, reused
	syncMu                              sync.Mutex
	claimMu                             sync.Mutex
	claimHour                           int64
	claimed, claimedBefore              map[uint64]struct{} // the credits claimed this hour and the hour before
}

// New returns the Filter cfg describes.
func New(cfg Config) *Filter {
	f := &Filter{agents: cfg.Agents, ranges: cfg.Ranges}
	if f.agents == nil {
		f.agents = DefaultAgents()
	}
	f.minClick = orDefault(cfg.MinClickDelay, DefaultMinClickDelay)
	f.minConversion = orDefault(cfg.MinConversionDelay, DefaultMinConversionDelay)
	f.maxUserEvents = int32(orDefault(cfg.UserEvents, DefaultUserEvents))
	f.maxAddressEvents = int32(orDefault(cfg.AddressEvents, DefaultAddressEvents))
	f.users, f.addresses = newWindow(), newWindow()
	if f.shared = cfg.Shared; f.shared != nil {
		f.users.shared, f.addresses.shared = true, true
	}
	f.v6bits = orDefault(cfg.IPv6Prefix, DefaultIPv6Prefix)
	if f.v6bits < 32 || f.v6bits > 128 {
		f.v6bits = DefaultIPv6Prefix
	}
	f.maxCampaignClicks = int32(orDefault(cfg.CampaignClicks, DefaultCampaignClicks))
	f.clickRateMin = int32(orDefault(cfg.ClickRateMin, DefaultClickRateMin))
	f.maxClickRate = cfg.MaxClickRate
	switch {
	case f.maxClickRate == 0:
		f.maxClickRate = DefaultMaxClickRate
	case f.maxClickRate < 0:
		f.clickRateMin = 0 // off
	}
	f.campaignClicks, f.impressions, f.clicks = newWindow(), newWindow(), newWindow()
	f.seed, f.claimed, f.claimedBefore = maphash.MakeSeed(), map[uint64]struct{}{}, map[uint64]struct{}{}
	return f
}

func orDefault[T time.Duration | int](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0 // off
	}
	return v
}

// Agents is the filter's User-Agent classifier.
func (f *Filter) Agents() *Agents { return f.agents }

// Ranges are the filter's data-centre ranges (nil: none).
func (f *Filter) Ranges() *Ranges { return f.ranges }

// MinClickDelay is the least time between an impression and its click
// (0: off).
func (f *Filter) MinClickDelay() time.Duration { return f.minClick }

// MinConversionDelay is the least time between a click and its
// conversion (0: off).
func (f *Filter) MinConversionDelay() time.Duration { return f.minConversion }

// Request is what a request says of itself and where it comes from.
type Request struct {
	UserAgent []byte
	IP        netip.Addr
	// SecPurpose and Purpose are the headers of a prefetch or prerender.
	SecPurpose, Purpose []byte
	// Webdriver: the page's script found navigator.webdriver set.
	Webdriver bool
}

// Request is why r is invalid traffic by what it says of itself and
// where it comes from (GIVT; Human when it is not): a prefetch, a
// browser under automation, its User-Agent (Agents.Reason), an address
// in a data-centre range, in that order.
func (f *Filter) Request(r *Request) Reason {
	switch {
	case (len(r.SecPurpose) > 0 || len(r.Purpose) > 0) && IsPrefetch(r.SecPurpose, r.Purpose):
		return Prefetch
	case r.Webdriver:
		return Headless
	}
	if why := f.agents.Reason(r.UserAgent); why != Human {
		return why
	}
	if f.ranges.Contains(r.IP) {
		return Datacenter
	}
	return Human
}

// A Credit is an event billed while its user and address were under
// their events a minute: kept for that minute, so that, when either goes
// past, it is credited (Burst). Kind and Token say which event (package
// serve's tracking URL: its kind and signed token), Cost what it billed.
type Credit struct {
	Kind  byte
	Token []byte
	Cost  int64
}

// Count counts an event of user (0: none) from ip (invalid: none) at
// now, and says Velocity when either has made more than its events this
// minute. The event that goes past first also returns the Credits kept
// for them this minute: each Credit is returned once, by whichever goes
// past first.
func (f *Filter) Count(user uint64, ip netip.Addr, now time.Time) (Reason, []Credit) {
	minute := now.Unix() / 60
	why := Human
	var credits []Credit
	if user != 0 && f.maxUserEvents > 0 {
		if n, kept := f.users.add(user, minute, f.maxUserEvents); n > f.maxUserEvents {
			why, credits = Velocity, f.claim(credits, kept, now)
		}
	}
	if ip.IsValid() && f.maxAddressEvents > 0 {
		if n, kept := f.addresses.add(f.addrKey(ip), minute, f.maxAddressEvents); n > f.maxAddressEvents {
			why, credits = Velocity, f.claim(credits, kept, now)
		}
	}
	return why, credits
}

// Sync shares the user and address velocity counts: it adds what this
// instance counted since the last Sync to the shared counts and learns
// every instance's totals of those keys, which later events of theirs
// are judged by — so that N instances see a client's whole rate, each
// within one Sync period. Without shared counts it does nothing. A
// failure leaves each instance counting its own (the counts it could not
// send are not sent again). Call it from one goroutine, every few
// hundred milliseconds.
func (f *Filter) Sync(ctx context.Context) error {
	if f.shared == nil {
		return nil
	}
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	counts := f.users.unsent(f.syncBuf[:0], 'u')
	counts = f.addresses.unsent(counts, 'a')
	f.syncBuf = counts[:0]
	if len(counts) == 0 {
		return nil
	}
	if err := f.shared.AddCounts(ctx, counts); err != nil {
		return err
	}
	for i := range counts {
		w := f.users
		if counts[i].Window == 'a' {
			w = f.addresses
		}
		w.learn(&counts[i])
	}
	return nil
}

// Keep keeps an event of kind (its token: copied) that billed cost, of
// user from ip at now, for crediting if either goes past its events this
// minute. It returns true when one went past while it was being billed:
// it is to be credited now (and is not kept).
func (f *Filter) Keep(user uint64, ip netip.Addr, now time.Time, kind byte, token []byte, cost int64) (creditNow bool) {
	minute := now.Unix() / 60
	past := false
	if user != 0 && f.maxUserEvents > 0 {
		past = !f.users.keep(user, minute, f.maxUserEvents, kind, token, cost)
	}
	if ip.IsValid() && f.maxAddressEvents > 0 {
		past = !f.addresses.keep(f.addrKey(ip), minute, f.maxAddressEvents, kind, token, cost) || past
	}
	return past && len(f.claim(nil, []Credit{{Kind: kind, Token: token, Cost: cost}}, now)) == 1
}

// Impressed counts a verified impression of people's from ip at now, for
// its address's click rate.
func (f *Filter) Impressed(ip netip.Addr, now time.Time) {
	if ip.IsValid() && f.clickRateMin > 0 {
		f.impressions.add(f.addrKey(ip), now.Unix()/3600, math.MaxInt32)
	}
}

// Click judges a verified click of people's, of campaign, from ip at
// now: ClickRate when its address's clicks this hour are at least the
// minimum and more than the largest share of its impressions — with the
// Credits kept for the address's clicks this hour (KeepClick), each
// returned once; else ClickLimit when its address has made more than its
// clicks of the campaign this hour. Human otherwise.
func (f *Filter) Click(campaign int64, ip netip.Addr, now time.Time) (Reason, []Credit) {
	if !ip.IsValid() {
		return Human, nil
	}
	hour, key := now.Unix()/3600, f.addrKey(ip)
	if f.clickRateMin > 0 {
		n, _ := f.clicks.add(key, hour, math.MaxInt32)
		if n >= f.clickRateMin && float64(n) > f.maxClickRate*float64(f.impressions.count(key, hour)) {
			return ClickRate, f.claim(nil, f.clicks.take(key, hour), now)
		}
	}
	if f.maxCampaignClicks > 0 {
		if n, _ := f.campaignClicks.add(key^uint64(campaign)*0xbf58476d1ce4e5b9, hour, math.MaxInt32); n > f.maxCampaignClicks {
			return ClickLimit, nil
		}
	}
	return Human, nil
}

// KeepClick keeps a click (its token: copied) that billed cost, from ip at
// now, for crediting if its address's click rate goes past a person's
// this hour (Click).
func (f *Filter) KeepClick(ip netip.Addr, now time.Time, kind byte, token []byte, cost int64) {
	if ip.IsValid() && f.clickRateMin > 0 {
		f.clicks.keep(f.addrKey(ip), now.Unix()/3600, math.MaxInt32, kind, token, cost)
	}
}

// claim appends to dst the credits of kept not claimed before (a credit
// is kept for its user, its address and, a click, its address's hour:
// whichever rule goes past first claims it). What was claimed is
// remembered for the hour and the next, as long as a credit is kept.
func (f *Filter) claim(dst, kept []Credit, now time.Time) []Credit {
	if len(kept) == 0 {
		return dst
	}
	f.claimMu.Lock()
	defer f.claimMu.Unlock()
	if hour := now.Unix() / 3600; f.claimHour != hour {
		f.claimedBefore, f.claimed = f.claimed, f.claimedBefore
		clear(f.claimed)
		if hour != f.claimHour+1 {
			clear(f.claimedBefore)
		}
		f.claimHour = hour
	}
	for _, c := range kept {
		k := maphash.Bytes(f.seed, c.Token) ^ uint64(c.Kind)
		_, done := f.claimed[k]
		if _, before := f.claimedBefore[k]; !done && !before {
			f.claimed[k] = struct{}{}
			dst = append(dst, c)
		}
	}
	return dst
}

// addrKey is what the address rules count ip by: an IPv4 address whole,
// an IPv6 address by its leading v6bits (a /64: one subscriber).
func (f *Filter) addrKey(ip netip.Addr) uint64 {
	ip = ip.Unmap()
	if ip.Is6() && f.v6bits < 128 {
		p, _ := ip.Prefix(f.v6bits)
		ip = p.Addr()
	}
	b := ip.As16()
	return binary.LittleEndian.Uint64(b[:8])*0x9e3779b97f4a7c15 ^ binary.LittleEndian.Uint64(b[8:])
}

// window counts events a period (a minute; an hour for the click rules:
// "minute" below is the period's number) by key, in shards that start
// afresh when the period changes (a fixed window: a burst across two minutes
// counts in each). A shard keeps what its keys billed this minute in two
// arrays reused minute after minute — the credits, each key's linked
// from its last, and their tokens' bytes —, so that an event allocates
// nothing once they have grown.
type window struct {
	shards [windowShards]windowShard
	// shared: its counts are shared with other instances' (Sync): a
	// key's count is its own and the others' the last Sync learnt.
	shared bool
}

const (
	windowShards = 64
	// maxKeys bounds the keys a shard counts in a minute: past it, the
	// shard forgets its counts (an attack by a million addresses is a
	// million events a minute that each look new).
	maxKeys = 16 << 10
	// maxKeptBytes bounds the tokens a shard keeps a minute (128 MiB in
	// all, about 30,000 billed events a second): past it, the minute's
	// further events are not kept for crediting.
	maxKeptBytes = 2 << 20
)

type windowShard struct {
	mu     sync.Mutex
	minute int64
	m      map[uint64]windowEntry
	kept   []keptCredit
	tokens []byte
	dirty  []uint64 // a shared window's keys counted since the last Sync
}

type windowEntry struct {
	n     int32
	nkept int32
	last  int32 // 1 + the index of the key's last kept credit (0: none, or given out)
	// A shared window's: the others' count this minute, as the last Sync
	// learnt it, and how much of n was sent.
	others, sent int32
	past         bool // n+others went past max: what was kept was given out
}

// keptCredit is a Credit kept in its shard: its token is
// tokens[start:end], the key's credit before it kept[prev-1].
type keptCredit struct {
	kind       byte
	prev       int32
	start, end int32
	cost       int64
}

func newWindow() *window {
	w := &window{}
	for i := range w.shards {
		w.shards[i].m = map[uint64]windowEntry{}
	}
	return w
}

func (*window) index(key uint64) uint64 { return (key * 0x9e3779b97f4a7c15) >> 58 }

func (w *window) shard(key uint64, minute int64) *windowShard {
	sh := &w.shards[w.index(key)]
	sh.mu.Lock()
	if sh.minute != minute || len(sh.m) >= maxKeys {
		clear(sh.m)
		sh.kept, sh.tokens, sh.dirty = sh.kept[:0], sh.tokens[:0], sh.dirty[:0]
		sh.minute = minute
	}
	return sh
}

// add counts an event of key; it returns the key's count this minute
// and, when that is the first past max, what was kept for it (copied
// out: the shard's arrays are the next minute's).
func (w *window) add(key uint64, minute int64, max int32) (int32, []Credit) {
	sh := w.shard(key, minute)
	defer sh.mu.Unlock()
	e := sh.m[key]
	e.n++
	if w.shared && e.n == e.sent+1 {
		sh.dirty = append(sh.dirty, key)
	}
	var kept []Credit
	n := e.n + e.others
	if n > max && !e.past {
		e.past, kept = true, sh.takeKept(&e)
	}
	sh.m[key] = e
	return n, kept
}

// unsent appends to dst, as Counts of window, what was counted of each
// key since the last Sync, and marks it sent.
func (w *window) unsent(dst []Count, window byte) []Count {
	for i := range w.shards {
		sh := &w.shards[i]
		sh.mu.Lock()
		for _, key := range sh.dirty {
			if e, ok := sh.m[key]; ok && e.n > e.sent {
				dst = append(dst, Count{Window: window, Minute: sh.minute, Key: key, Delta: int64(e.n - e.sent), own: e.n})
				e.sent = e.n
				sh.m[key] = e
			}
		}
		sh.dirty = sh.dirty[:0]
		sh.mu.Unlock()
	}
	return dst
}

// learn keeps the others' count of c's key, from its shared total.
// A key of a minute gone (the shard started afresh) is not touched.
func (w *window) learn(c *Count) {
	sh := &w.shards[w.index(c.Key)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.m[c.Key]; ok && sh.minute == c.Minute {
		e.others = int32(min(max(c.Total-int64(c.own), 0), math.MaxInt32/2))
		sh.m[c.Key] = e
	}
}

// takeKept copies out what was kept for e (the shard's arrays are the
// next minute's) and forgets it.
func (sh *windowShard) takeKept(e *windowEntry) []Credit {
	if e.last == 0 {
		return nil
	}
	kept := make([]Credit, 0, e.nkept)
	for i := e.last; i > 0; i = sh.kept[i-1].prev {
		k := &sh.kept[i-1]
		kept = append(kept, Credit{Kind: k.kind, Token: bytes.Clone(sh.tokens[k.start:k.end]), Cost: k.cost})
	}
	e.last, e.nkept = 0, 0
	return kept
}

// take returns what was kept for key this minute, each once.
func (w *window) take(key uint64, minute int64) []Credit {
	sh := w.shard(key, minute)
	defer sh.mu.Unlock()
	e, ok := sh.m[key]
	if !ok {
		return nil
	}
	kept := sh.takeKept(&e)
	sh.m[key] = e
	return kept
}

// count is key's count this minute.
func (w *window) count(key uint64, minute int64) int32 {
	sh := w.shard(key, minute)
	defer sh.mu.Unlock()
	e := sh.m[key]
	return e.n + e.others
}

// keep keeps a billed event for key this minute, while the key is not
// past max (at most one a counted event); false when it is past.
func (w *window) keep(key uint64, minute int64, max int32, kind byte, token []byte, cost int64) bool {
	sh := w.shard(key, minute)
	defer sh.mu.Unlock()
	e, ok := sh.m[key]
	switch {
	case !ok: // a new minute, or forgotten: nothing to go past with
		return true
	case e.past || e.n+e.others > max:
		return false
	case e.nkept < e.n && len(sh.tokens)+len(token) <= maxKeptBytes:
		start := int32(len(sh.tokens))
		sh.tokens = append(sh.tokens, token...)
		sh.kept = append(sh.kept, keptCredit{kind: kind, prev: e.last, start: start, end: int32(len(sh.tokens)), cost: cost})
		e.last, e.nkept = int32(len(sh.kept)), e.nkept+1
		sh.m[key] = e
	}
	return true
}
