// Package reports counts impressions, clicks, conversions and reach per ad
// and per link from the event files the collector writes, and answers
// reports over them.
//
// Counting is exactly once: the collector tells a Tally of every batch of
// lines once it is in its file (Written) and of every finished file; the
// Tally aggregates in memory and Flush adds the counts to the store in the
// same transaction as the position in each file they reach (the ledger).
// After a crash, Recover counts what the files hold beyond the ledger;
// a file that ships to object storage is flushed first. Each instance
// writes only rows of its own slot (its instance name), so instances never
// contend for a row and their counts add up.
package reports

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/axiomhq/hyperloglog"
	"github.com/prometheus/client_golang/prometheus"

	"marquee"
	"marquee/collector"
	"marquee/geoip"
	"marquee/linkroute"
	"marquee/reportrow"
	"marquee/targeting"
)

// MaxUID bounds the bytes of a uid a report reads; a longer one counts
// the event but not its reach.
const MaxUID = 128

// Store is where a Tally's counts go.
type Store interface {
	// AddReports adds a batch in one transaction.
	AddReports(ctx context.Context, b *Batch) error
	// ReportFiles returns the marks of the named files that have one.
	ReportFiles(ctx context.Context, files []string) (map[string]FileMark, error)
}

// Resolver tells which ads, links, campaigns and placements exist:
// events naming others are not counted for them.
type Resolver interface {
	AdExists(ctx context.Context, id int64) (bool, error)
	// Link returns the link of key (marquee.LinkKey) with its id and
	// destinations, and whether it exists.
	Link(ctx context.Context, key string) (marquee.Link, bool, error)
	// CampaignAdvertiser returns the advertiser of campaign id (whose
	// rows a campaign's events also count in).
	CampaignAdvertiser(ctx context.Context, id int64) (int64, bool, error)
	PlacementID(ctx context.Context, name string) (int64, bool, error)
}

// The entities a pending row counts for: an ad or a campaign by id, a
// link or a placement by name (resolved to an id at the flush).
const (
	entAd        = 'a'
	entLink      = 'l'
	entCampaign  = 'c'
	entPlacement = 'p'
)

// pkey is a row as counted before the flush resolves it: a link or a
// placement by name.
type pkey struct {
	entity   byte // entAd, entLink, entCampaign, entPlacement
	id       int64
	code     string
	hour     int64
	country  [2]byte
	platform uint8 // index in platforms
	bot      uint8 // an ivt.Reason (0: a person's)
}

// dkey is an ad's or a link's events of a day that share their values of
// every dimension row's dimension, as counted before the flush resolves
// it and splits it into a row of each (one map entry an event, not four).
type dkey struct {
	entity                byte // entAd or entLink
	id                    int64
	code                  string
	day                   int64
	bot                   uint8 // an ivt.Reason (0: a person's)
	referrer, browser, os string
	dest                  int8   // a link click's destination; -1: none
	errCode               string // a player's error's code (Event.ErrorCode); "": not an error
}

// kvkey is an ad's, campaign's or placement's events of one UTC day with
// one value of one of the report keys.
type kvkey struct {
	entity     byte // entAd, entCampaign or entPlacement
	id         int64
	code       string // a placement's name
	day        int64
	bot        uint8 // an ivt.Reason (0: a person's)
	key, value string
}

// vkey is a link's conversions by one visitor of one day, before the
// flush finds the destination the link's split sent that visitor to.
type vkey struct {
	code    string
	day     int64
	bot     uint8  // an ivt.Reason (0: a person's)
	visitor uint64 // linkroute.VisitorHash
}

// rkey is a reach sketch as counted before the flush resolves it.
type rkey struct {
	entity byte
	id     int64
	code   string
	day    int64
}

// fileState is how far a file is counted in memory; size is -1 until it
// is finished.
type fileState struct{ upto, size int64 }

// Tally counts event lines into report rows. Written and Finished may be
// called from any goroutine; Flush, Recover and LoadPending by one owner
// (Flush is also safe to call concurrently, as a shipper does).
type Tally struct {
	store     Store
	res       Resolver
	slot      string
	log       *slog.Logger
	m         *metrics
	keep      func(hour int64) bool // when set, only events of the hours it keeps are counted
	reqs      *Requests             // Config.Requests
	samples   *Samples              // Config.Samples
	bidCounts *Bids                 // Config.Bids

	mu sync.Mutex
	pending
	cls     *Classifier // what each line counts; its strings are the pending rows' keys
	event   Event       // count's scratch
	files   map[string]*fileState
	skipped map[string]int64 // lines not counted since the last flush, by reason
	oldest  time.Time        // when the oldest unflushed line was written

	flushMu sync.Mutex
	// recovered is closed once Recover has counted what the spool holds:
	// until then Flush waits, so that a leftover file does not ship (and
	// leave the disk) before its tail is counted.
	recovered chan struct{}
}

// Config configures a Tally.
type Config struct {
	Store    Store
	Resolver Resolver
	GeoIP    *geoip.DB // may be nil: countries come from the events only
	Slot     string    // this instance's name: the rows it owns
	Log      *slog.Logger
	// Keys are the key-values counted by value (the install's report
	// keys; nil none): an event's kv field's values of these keys, by
	// ad, campaign and placement and day.
	Keys *KeySet
	// Requests, when set, are the decisions' slots counted; each flush
	// adds them to the store with the events' rows.
	Requests *Requests
	// Samples, when set, are the requests sampled for forecasts; each
	// flush adds the hours that are over.
	Samples *Samples
	// Bids, when set, are header bidding's bids counted at the decision;
	// each flush adds them with the events' (report_bids).
	Bids *Bids
}

// New returns a Tally; reg (if not nil) receives its metrics.
func New(cfg Config, reg prometheus.Registerer) *Tally {
	t := &Tally{store: cfg.Store, res: cfg.Resolver, slot: cfg.Slot, log: cfg.Log, m: newMetrics(reg), reqs: cfg.Requests, samples: cfg.Samples, bidCounts: cfg.Bids,
		cls: NewClassifier(cfg.GeoIP, cfg.Keys), files: map[string]*fileState{}, recovered: make(chan struct{})}
	t.reset()
	return t
}

// pending is what a Tally has counted and not yet flushed.
type pending struct {
	counts map[pkey]*Counts
	dims   map[dkey]*Counts
	kvs    map[kvkey]*Counts
	cube   map[ckey]*Counts
	visits map[vkey]int64 // links' conversions by visitor (see vkey)
	reach  map[rkey]*hyperloglog.Sketch
	bids   map[bkey]*[2]int64 // header bidding's verified impressions and revenue (nanos)
}

// bkey is what a bid's events are counted by: the hour, the placement's
// name (interned) and the bidder's.
type bkey struct {
	hour              int64
	placement, bidder string
}

func (p *pending) empty() bool {
	return len(p.counts) == 0 && len(p.dims) == 0 && len(p.kvs) == 0 && len(p.cube) == 0 && len(p.visits) == 0 && len(p.reach) == 0 && len(p.bids) == 0
}

func (t *Tally) reset() {
	t.pending = pending{counts: map[pkey]*Counts{}, dims: map[dkey]*Counts{}, kvs: map[kvkey]*Counts{}, cube: map[ckey]*Counts{}, visits: map[vkey]int64{},
		reach: map[rkey]*hyperloglog.Sketch{}, bids: map[bkey]*[2]int64{}}
	t.skipped, t.oldest = map[string]int64{}, time.Time{}
	t.cls.Forget()
}

// Written counts lines written to file at offset (NDJSON bytes from the
// start of the file). Lines a flushed or earlier call counted are
// skipped: a file completed after a crash is told again from its start.
func (t *Tally) Written(file string, offset int64, lines []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fs := t.files[file]
	if fs == nil {
		fs = &fileState{size: -1}
		t.files[file] = fs
	}
	end := offset + int64(len(lines))
	if end <= fs.upto {
		return
	}
	if offset < fs.upto {
		lines = lines[fs.upto-offset:]
	}
	if t.oldest.IsZero() {
		t.oldest = time.Now()
	}
	t.count(lines)
	fs.upto = end
}

// Finished records that file is complete at size bytes.
func (t *Tally) Finished(file string, size int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fs := t.files[file]
	if fs == nil {
		fs = &fileState{}
		t.files[file] = fs
	}
	fs.size = size
}

// count adds the events of lines to the pending rows. t.mu is held.
func (t *Tally) count(lines []byte) {
	e := &t.event
	for line := range bytes.Lines(lines) {
		if line = bytes.TrimSuffix(line, []byte("\n")); len(line) == 0 {
			continue
		}
		if reason := t.cls.Read(line, e); reason != "" {
			t.skip(reason)
			continue
		}
		if t.keep != nil && !t.keep(e.Hour) {
			continue
		}
		for _, reason := range e.Skipped {
			t.skip(reason)
		}
		c := &e.Counts
		k := pkey{hour: e.Hour, country: e.Country, platform: e.platform, bot: uint8(e.IVT)}
		var owners [3]kvkey // what the event's key-values are counted for: its ad, campaign and placement
		n := 0
		ck := ckey{day: e.Day(), country: k.country, device: e.Device, bot: k.bot} // its cell of the cube
		if e.Ad != 0 {
			k.entity, k.id, ck.ad = entAd, e.Ad, e.Ad
			t.add(k, c, e.UID)
			t.addDims(k, c, e)
			owners[n], n = kvkey{entity: entAd, id: e.Ad}, n+1
		}
		if e.Link != "" {
			k.entity, k.id, k.code = entLink, 0, e.Link
			lc := *c // a link has no decision to vouch for its events: verification is not a link's
			lc.UnverifiedImpressions, lc.UnverifiedClicks, lc.UnverifiedConversions, lc.UnverifiedViews = 0, 0, 0, 0
			t.add(k, &lc, e.UID)
			t.addDims(k, &lc, e)
		}
		if e.Campaign != 0 {
			k.entity, k.id, k.code, ck.campaign = entCampaign, e.Campaign, "", e.Campaign
			t.add(k, c, e.UID)
			owners[n], n = kvkey{entity: entCampaign, id: e.Campaign}, n+1
		}
		if e.Placement != "" {
			k.entity, k.id, k.code = entPlacement, 0, e.Placement
			ck.placement = k.code
			t.add(k, c, e.UID)
			owners[n], n = kvkey{entity: entPlacement, code: k.code}, n+1
			if e.Bidder != "" && c.Impressions > c.UnverifiedImpressions {
				bk := bkey{hour: e.Hour, placement: k.code, bidder: e.Bidder}
				if t.bids[bk] == nil {
					t.bids[bk] = new([2]int64)
				}
				t.bids[bk][0] += c.Impressions - c.UnverifiedImpressions
				t.bids[bk][1] += c.SpendNanos
			}
		}
		if n > 0 {
			t.addCube(ck, c)
		}
		if len(e.KVs) > 0 {
			t.addKVs(k, c, e.KVs, owners[:n], ck)
		}
	}
}

// addKVs counts an event (k, c) by the values of the report keys it
// names, for owners (its ad, campaign and placement, as counted). t.mu is
// held.
func (t *Tally) addKVs(k pkey, c *Counts, kvs []KeyValue, owners []kvkey, ck ckey) {
	day := k.hour / 86400 * 86400
	for _, kv := range kvs {
		for _, o := range owners {
			o.day, o.bot, o.key, o.value = day, k.bot, kv.Key, kv.Value
			addTo(t.kvs, o, c)
		}
		ck.grain, ck.country, ck.device, ck.key, ck.value = grainKV, [2]byte{}, "", kv.Key, kv.Value
		addTo(t.cube, ck, c)
	}
}

// skip counts a line not counted, for the metric the next flush updates
// (a label look-up a line would cost the writer). t.mu is held.
func (t *Tally) skip(reason string) { t.skipped[reason]++ }

func (t *Tally) add(k pkey, c *Counts, uid []byte) {
	addTo(t.counts, k, c)
	if len(uid) > 0 {
		rk := rkey{entity: k.entity, id: k.id, code: k.code, day: k.hour / 86400 * 86400}
		sk := t.reach[rk]
		if sk == nil {
			sk = hyperloglog.New()
			t.reach[rk] = sk
		}
		sk.Insert(uid)
	}
}

// addDims counts an ad's or a link's event (k, c) by referrer, browser
// and OS, and a link's by destination: a click by the one its line names,
// a conversion by the visitor, whose destination the flush finds. t.mu is
// held.
func (t *Tally) addDims(k pkey, c *Counts, e *Event) {
	d := dkey{entity: k.entity, id: k.id, code: k.code, day: k.hour / 86400 * 86400, bot: k.bot,
		referrer: e.Referrer, browser: e.Browser, os: e.OS, dest: -1, errCode: e.ErrorCode}
	if k.entity == entLink {
		d.dest = e.Dest
		if e.HasVisitor {
			t.visits[vkey{code: k.code, day: d.day, bot: k.bot, visitor: e.Visitor}] += c.Conversions
		}
	}
	addTo(t.dims, d, c)
}

// platformIndex is p's index in platforms (web for an unknown one).
func platformIndex(p string) uint8 {
	if code := targeting.PlatformCode(p); code != 0 {
		return uint8(code - 1)
	}
	return uint8(len(platforms) - 1)
}

// Flush adds everything counted so far to the store in one transaction,
// with how far each file is counted. On failure the counts stay pending
// for the next flush. Flushes run one at a time, and not before Recover
// has run.
func (t *Tally) Flush(ctx context.Context) error {
	select {
	case <-t.recovered:
	case <-ctx.Done():
		return ctx.Err()
	}
	return t.flush(ctx)
}

func (t *Tally) flush(ctx context.Context) error {
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	start := time.Now()
	t.mu.Lock()
	p, oldest, skipped := t.pending, t.oldest, t.skipped
	var marks []FileMark
	for name, fs := range t.files {
		marks = append(marks, FileMark{File: name, Upto: fs.upto, Complete: fs.size >= 0 && fs.upto >= fs.size})
	}
	t.reset()
	t.mu.Unlock()
	for reason, n := range skipped {
		t.m.notCounted(reason, n)
	}
	var reqs []reportrow.RequestRow
	if t.reqs != nil {
		reqs = t.reqs.take()
	}
	var samples []reportrow.RequestSample
	if t.samples != nil {
		samples = t.samples.take(time.Now())
	}
	var bids []reportrow.BidRow
	if t.bidCounts != nil {
		bids = t.bidCounts.take()
	}
	if p.empty() && len(marks) == 0 && len(reqs) == 0 && len(samples) == 0 && len(bids) == 0 {
		return nil
	}
	b, dropped, err := t.resolve(ctx, p)
	if err == nil {
		b.Files, b.Requests, b.Samples, b.Bids = marks, reqs, samples, mergeBids(append(b.Bids, bids...))
		err = t.store.AddReports(ctx, b)
	}
	if err != nil {
		t.putBack(p, oldest)
		if t.reqs != nil {
			t.reqs.putBack(reqs)
		}
		if t.samples != nil {
			t.samples.putBack(samples)
		}
		if t.bidCounts != nil {
			t.bidCounts.putBack(bids)
		}
		t.m.flushErrors.Inc()
		return fmt.Errorf("reports flush: %w", err)
	}
	t.mu.Lock()
	for _, mk := range marks {
		if fs := t.files[mk.File]; mk.Complete && fs != nil && fs.upto == mk.Upto {
			delete(t.files, mk.File)
		}
	}
	t.mu.Unlock()
	for reason, n := range dropped {
		t.m.notCounted(reason, n)
	}
	var events int64
	for _, r := range b.Rows {
		events += r.Events()
	}
	t.m.counted.Add(float64(events))
	t.m.rows.Add(float64(len(b.Rows)))
	t.m.flushSeconds.Observe(time.Since(start).Seconds())
	if !oldest.IsZero() {
		t.m.lag.Set(time.Since(oldest).Seconds())
	}
	return nil
}

// resolve turns pending rows into store rows: links and placements by
// id, a campaign's rows also as its advertiser's, and events naming an
// entity that does not exist dropped (and counted by reason, per event).
func (t *Tally) resolve(ctx context.Context, p pending) (*Batch, map[string]int64, error) {
	lk := NewLookup(t.res)
	known := func(entity byte, id int64, code string) (found, error) { return lk.known(ctx, entity, id, code) }
	b := &Batch{Slot: t.slot}
	dropped := map[string]int64{}
	rows := map[Key]int{} // a campaign's and its advertiser's rows may meet another's
	addRow := func(k Key, c Counts) {
		if i, ok := rows[k]; ok {
			b.Rows[i].Counts.Add(c)
			return
		}
		rows[k] = len(b.Rows)
		b.Rows = append(b.Rows, Row{Key: k, Counts: c})
	}
	for k, c := range p.counts {
		f, err := known(k.entity, k.id, k.code)
		if err != nil {
			return nil, nil, err
		}
		if !f.ok {
			dropped["unknown "+entityName(k.entity)] += c.Events()
			continue
		}
		key := Key{Entity: entityName(k.entity), ID: f.id, Time: k.hour, Country: string(k.country[:]), Platform: platforms[k.platform], IVT: k.bot}
		addRow(key, *c)
		if k.entity == entCampaign {
			key.Entity, key.ID = marquee.EntityAdvertiser, f.parent
			addRow(key, *c)
		}
	}
	dimRows := map[DimRow]int{} // by key: counts zero
	addDim := func(d DimRow, c Counts) {
		if i, ok := dimRows[d]; ok {
			b.Dims[i].Counts.Add(c)
			return
		}
		dimRows[d] = len(b.Dims)
		d.Counts = c
		b.Dims = append(b.Dims, d)
	}
	for k, c := range p.dims {
		f, err := known(k.entity, k.id, k.code)
		if err != nil {
			return nil, nil, err
		}
		if !f.ok { // the event is dropped, and counted so, with its row
			continue
		}
		d := DimRow{Entity: entityName(k.entity), ID: f.id, Day: k.day, IVT: k.bot}
		for _, dv := range [...]struct{ dim, value string }{
			{reportrow.DimReferrer, k.referrer}, {reportrow.DimBrowser, k.browser}, {reportrow.DimOS, k.os},
		} {
			d.Dim, d.Value = dv.dim, dv.value
			addDim(d, *c)
		}
		if k.dest >= 0 {
			d.Dim, d.Value = reportrow.DimDestination, strconv.Itoa(int(k.dest))
			addDim(d, *c)
		}
		if k.errCode != "" {
			d.Dim, d.Value = reportrow.DimError, k.errCode
			addDim(d, *c)
		}
	}
	for k, c := range p.kvs {
		f, err := known(k.entity, k.id, k.code)
		if err != nil {
			return nil, nil, err
		}
		if f.ok {
			addDim(DimRow{Entity: entityName(k.entity), ID: f.id, Day: k.day, Dim: reportrow.KVDim + k.key, Value: k.value, IVT: k.bot}, *c)
		}
	}
	for v, n := range p.visits {
		f, err := known(entLink, 0, v.code)
		if err != nil {
			return nil, nil, err
		}
		if f.ok && len(f.dests) > 0 {
			d := linkroute.Pick(f.dests, linkroute.Sticky(f.id, v.visitor))
			addDim(DimRow{Entity: marquee.EntityLink, ID: f.id, Day: v.day, Dim: reportrow.DimDestination, Value: strconv.Itoa(d), IVT: v.bot},
				Counts{Conversions: n})
		}
	}
	advertisers := map[[2]int64]*hyperloglog.Sketch{} // advertiser, day
	for k, sk := range p.reach {
		f, err := known(k.entity, k.id, k.code)
		if err != nil {
			return nil, nil, err
		}
		if !f.ok {
			continue
		}
		enc, err := sk.MarshalBinary()
		if err != nil {
			return nil, nil, err
		}
		b.Reach = append(b.Reach, Reach{Entity: entityName(k.entity), ID: f.id, Day: k.day, Sketch: enc})
		if k.entity == entCampaign {
			ak := [2]int64{f.parent, k.day}
			if advertisers[ak] == nil {
				advertisers[ak] = hyperloglog.New()
			}
			if err := advertisers[ak].Merge(sk); err != nil {
				return nil, nil, err
			}
		}
	}
	for ak, sk := range advertisers {
		enc, err := sk.MarshalBinary()
		if err != nil {
			return nil, nil, err
		}
		b.Reach = append(b.Reach, Reach{Entity: marquee.EntityAdvertiser, ID: ak[0], Day: ak[1], Sketch: enc})
	}
	for k, c := range p.bids {
		f, err := known(entPlacement, 0, k.placement)
		if err != nil {
			return nil, nil, err
		}
		if f.ok { // else dropped, and counted so, with the placement's row
			b.Bids = append(b.Bids, reportrow.BidRow{Hour: k.hour, Placement: f.id, Bidder: k.bidder, Impressions: c[0], Revenue: c[1]})
		}
	}
	if err := resolveCube(ctx, p, b, known); err != nil {
		return nil, nil, err
	}
	var err error
	b.Reach, err = reportrow.WithAll(b.Reach)
	return b, dropped, err
}

func entityName(e byte) string {
	switch e {
	case entAd:
		return marquee.EntityAd
	case entCampaign:
		return marquee.EntityCampaign
	case entPlacement:
		return marquee.EntityPlacement
	}
	return marquee.EntityLink
}

// putBack returns a failed flush's counts to the pending ones.
func (t *Tally) putBack(p pending, oldest time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, c := range p.bids {
		if t.bids[k] == nil {
			t.bids[k] = new([2]int64)
		}
		t.bids[k][0] += c[0]
		t.bids[k][1] += c[1]
	}
	for k, c := range p.counts {
		addTo(t.counts, k, c)
	}
	for k, c := range p.dims {
		addTo(t.dims, k, c)
	}
	for k, c := range p.kvs {
		addTo(t.kvs, k, c)
	}
	for k, c := range p.cube {
		addTo(t.cube, k, c)
	}
	for k, n := range p.visits {
		t.visits[k] += n
	}
	for k, sk := range p.reach {
		if p := t.reach[k]; p != nil {
			p.Merge(sk)
		} else {
			t.reach[k] = sk
		}
	}
	for k := range p.counts {
		if k.code != "" {
			t.cls.value(k.code)
		}
	}
	if !oldest.IsZero() && (t.oldest.IsZero() || oldest.Before(t.oldest)) {
		t.oldest = oldest
	}
}

// LoadPending reads how far the interrupted files of the spool at dir
// (tmp/*.part) are counted, so that the collector's completing them at
// start counts only what was not: call it before collector.New.
func (t *Tally) LoadPending(ctx context.Context, dir string) error {
	parts, _ := filepath.Glob(filepath.Join(dir, "tmp", "*.part"))
	var names []string
	for _, p := range parts {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".part"))
	}
	marks, err := t.marks(ctx, names)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, mk := range marks {
		t.files[mk.File] = &fileState{upto: mk.Upto, size: -1}
	}
	return nil
}

// marks reads the marks of files, a chunk at a time.
func (t *Tally) marks(ctx context.Context, names []string) (map[string]FileMark, error) {
	out := map[string]FileMark{}
	for len(names) > 0 {
		chunk := names[:min(500, len(names))]
		names = names[len(chunk):]
		m, err := t.store.ReportFiles(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("report ledger: %w", err)
		}
		for k, v := range m {
			out[k] = v
		}
	}
	return out, nil
}

// Recover counts what the finished files of the spool at dir hold beyond
// their marks (a crash between a write and its flush), then flushes; from
// then on Flush runs. Call it once, after collector.New has completed the
// interrupted files.
func (t *Tally) Recover(ctx context.Context, dir string) error {
	files, err := collector.FinishedFiles(dir)
	if err != nil {
		return err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	marks, err := t.marks(ctx, names)
	if err != nil {
		return err
	}
	recovered := 0
	for i, path := range files {
		mk := marks[names[i]]
		t.mu.Lock()
		_, known := t.files[names[i]]
		t.mu.Unlock()
		if mk.Complete || known {
			continue
		}
		data, err := collector.ReadFile(path)
		if err != nil {
			return err
		}
		t.mu.Lock()
		t.files[names[i]] = &fileState{upto: mk.Upto, size: -1}
		t.mu.Unlock()
		t.Written(names[i], 0, data)
		t.Finished(names[i], int64(len(data)))
		recovered++
	}
	if recovered > 0 {
		t.log.Info("reports: counted what event files held beyond the ledger", "files", recovered)
	}
	if err := t.flush(ctx); err != nil {
		return err
	}
	close(t.recovered)
	return nil
}

// Rebuilder is the store of Rebuild.
type Rebuilder interface {
	Store
	ReplaceReports(ctx context.Context, b *Batch, from, to int64) error
}

// Rebuild recomputes the slot's reports of [from, to) (whole UTC days)
// from the finished event files of the spool at dir, and replaces what
// the store holds for them: first every file is counted up to its end
// (as Recover does), then the range is counted again from the files and
// its rows and sketches replaced in one transaction. Running it twice
// changes nothing. Events of the range in files no longer on disk (shipped
// to object storage) are not in the result.
func Rebuild(ctx context.Context, cfg Config, st Rebuilder, dir string, from, to int64) (*Batch, error) {
	t := New(cfg, nil)
	if err := t.Recover(ctx, dir); err != nil {
		return nil, err
	}
	r := New(cfg, nil)
	r.keep = func(hour int64) bool { return hour >= from && hour < to }
	files, err := collector.FinishedFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, path := range files {
		data, err := collector.ReadFile(path)
		if err != nil {
			return nil, err
		}
		r.Written(filepath.Base(path), 0, data)
	}
	b, _, err := r.resolve(ctx, r.pending)
	if err != nil {
		return nil, err
	}
	return b, st.ReplaceReports(ctx, b, from, to)
}

// adID parses an ad id (a string or a number of digits).
func adID(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 || bytes.IndexFunc(b, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	return id, err == nil && id > 0
}
