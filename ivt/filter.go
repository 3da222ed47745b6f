package ivt

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"sync/atomic"
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
	taken atomic.Bool
}

// Count counts an event of user (0: none) from ip (invalid: none) at
// now, and says Velocity when either has made more than its events this
// minute. The event that goes past first also returns the Credits kept
// for them this minute: each Credit is returned once, by whichever goes
// past first.
func (f *Filter) Count(user uint64, ip netip.Addr, now time.Time) (Reason, []*Credit) {
	minute := now.Unix() / 60
	why := Human
	var credits []*Credit
	if user != 0 && f.maxUserEvents > 0 {
		if n, kept := f.users.add(user, minute, f.maxUserEvents); n > f.maxUserEvents {
			why, credits = Velocity, claim(credits, kept)
		}
	}
	if ip.IsValid() && f.maxAddressEvents > 0 {
		if n, kept := f.addresses.add(addrKey(ip), minute, f.maxAddressEvents); n > f.maxAddressEvents {
			why, credits = Velocity, claim(credits, kept)
		}
	}
	return why, credits
}

// Keep keeps c, billed for an event of user from ip at now, for
// crediting if either goes past its events this minute. It returns true
// when one went past while c was being billed: c is to be credited now
// (and is not kept).
func (f *Filter) Keep(user uint64, ip netip.Addr, now time.Time, c *Credit) (creditNow bool) {
	minute := now.Unix() / 60
	past := false
	if user != 0 && f.maxUserEvents > 0 {
		past = !f.users.keep(user, minute, f.maxUserEvents, c)
	}
	if ip.IsValid() && f.maxAddressEvents > 0 {
		past = !f.addresses.keep(addrKey(ip), minute, f.maxAddressEvents, c) || past
	}
	return past && c.taken.CompareAndSwap(false, true)
}

func claim(dst, kept []*Credit) []*Credit {
	for _, c := range kept {
		if c.taken.CompareAndSwap(false, true) {
			dst = append(dst, c)
		}
	}
	return dst
}

func addrKey(ip netip.Addr) uint64 {
	b := ip.Unmap().As16()
	return binary.LittleEndian.Uint64(b[:8])*0x9e3779b97f4a7c15 ^ binary.LittleEndian.Uint64(b[8:])
}

// window counts events a minute by key, in shards that start afresh
// when the minute changes (a fixed window: a burst across two minutes
// counts in each).
type window struct {
	shards [windowShards]windowShard
}

const (
	windowShards = 64
	// maxKeys bounds the keys a shard counts in a minute: past it, the
	// shard forgets its counts (an attack by a million addresses is a
	// million events a minute that each look new).
	maxKeys = 16 << 10
)

type windowShard struct {
	mu     sync.Mutex
	minute int64
	m      map[uint64]*windowEntry
}

type windowEntry struct {
	n    int32
	kept []*Credit // until the key goes past (then nil: given out)
}

func newWindow() *window {
	w := &window{}
	for i := range w.shards {
		w.shards[i].m = map[uint64]*windowEntry{}
	}
	return w
}

func (w *window) shard(key uint64, minute int64) *windowShard {
	sh := &w.shards[(key*0x9e3779b97f4a7c15)>>58]
	sh.mu.Lock()
	if sh.minute != minute || len(sh.m) >= maxKeys {
		clear(sh.m)
		sh.minute = minute
	}
	return sh
}

// add counts an event of key; it returns the key's count this minute
// and, when that is the first past max, what was kept for it.
func (w *window) add(key uint64, minute int64, max int32) (int32, []*Credit) {
	sh := w.shard(key, minute)
	defer sh.mu.Unlock()
	e := sh.m[key]
	if e == nil {
		e = &windowEntry{}
		sh.m[key] = e
	}
	e.n++
	var kept []*Credit
	if e.n == max+1 {
		kept, e.kept = e.kept, nil
	}
	return e.n, kept
}

// keep keeps c for key this minute, while the key is not past max (at
// most one Credit per event counted); false when it is past.
func (w *window) keep(key uint64, minute int64, max int32, c *Credit) bool {
	sh := w.shard(key, minute)
	defer sh.mu.Unlock()
	e := sh.m[key]
	switch {
	case e == nil: // a new minute, or forgotten: nothing to go past with
		return true
	case e.n > max:
		return false
	case len(e.kept) < int(e.n):
		e.kept = append(e.kept, c)
	}
	return true
}
