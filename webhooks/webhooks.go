// Package webhooks delivers events to the URLs operators register
// (docs/api.md#webhooks): clicks, conversions and impressions of a link,
// an ad, a campaign or all, in batches, signed as the Standard Webhooks
// specification says (webhook-id, webhook-timestamp, webhook-signature:
// HMAC-SHA256, with github.com/standard-webhooks/standard-webhooks), and
// retried with exponential backoff and full jitter until a day has gone
// without a success; then the webhook is disabled, with the reason, for
// its owner to see.
//
// A Dispatcher is told of every line the collector writes (it is a
// collector.Forwarder that never holds events back): deliveries never
// run on a request's path, and a slow or failing receiver only grows its
// own queue, bounded (the oldest events are dropped past it, counted and
// logged). What a queue holds is in memory: a restart forgets it (the
// events stay in the files).
//
// Every connection is checked against server-side request forgery: the
// address dialled — after resolution, so that a name cannot point
// somewhere else between check and use — must not be loopback, private,
// link-local (169.254.169.254, the cloud metadata address), unspecified,
// multicast or shared address space, unless the operator allows it.
package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"marquee"
	"marquee/eventline"
)

// Store is what the Dispatcher needs of the store.
type Store interface {
	Webhooks(ctx context.Context) ([]marquee.Webhook, error)
	Webhook(ctx context.Context, id int64) (marquee.Webhook, error)
	SetWebhookState(ctx context.Context, id int64, state, reason string) (marquee.Webhook, error)
	AddWebhookDeliveries(ctx context.Context, ds []marquee.WebhookDelivery) error
}

// Config tunes a Dispatcher. Zero values take the defaults.
type Config struct {
	// Key is the server's key webhook secrets are derived from
	// (required).
	Key []byte
	// AllowPrivate lets deliveries reach loopback, private and
	// link-local addresses (tests, a receiver on the same network).
	AllowPrivate bool
	// BatchEvents is how many events a delivery carries at most
	// (default 100); BatchWait how long the first event of a batch waits
	// for others (default 1 s).
	BatchEvents int
	BatchWait   time.Duration
	// RetryFor is how long a batch is retried before the webhook is
	// disabled (default 24 h); FirstRetry the first backoff, doubled up
	// to MaxRetry (defaults 1 s, 10 min), each drawn at random below it
	// (full jitter).
	RetryFor, FirstRetry, MaxRetry time.Duration
	// QueueEvents bounds the events a webhook holds (default 10,000).
	QueueEvents int
	// Timeout bounds one delivery (default 10 s).
	Timeout    time.Duration
	Log        *slog.Logger
	Registerer prometheus.Registerer
	Now        func() time.Time
}

// Dispatcher delivers events to the webhooks of a store. Its methods
// are safe for concurrent use; Close stops it.
type Dispatcher struct {
	cfg    Config
	st     Store
	client *http.Client
	m      *metrics

	hooks atomic.Pointer[[]*hook] // the active ones, read on every Written
	mu    sync.Mutex              // Reload and Close
	byID  map[int64]*hook
	wg    sync.WaitGroup
}

// hook is one active webhook: its definition, its secret's signer, and
// its queue with the goroutine that delivers it.
type hook struct {
	w      marquee.Webhook
	events uint8 // bits of the event types it wants (typeBit)
	signer *standardwebhooks.Webhook

	mu    sync.Mutex
	queue [][]byte // event lines (copies), oldest first
	first time.Time
	wake  chan struct{}
	stop  chan struct{}
}

// New returns a Dispatcher with no webhook: call Reload.
func New(cfg Config, st Store) (*Dispatcher, error) {
	if len(cfg.Key) < 16 {
		return nil, errors.New("webhooks: a key of at least 16 bytes is required")
	}
	if cfg.BatchEvents <= 0 {
		cfg.BatchEvents = 100
	}
	if cfg.BatchWait <= 0 {
		cfg.BatchWait = time.Second
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = 24 * time.Hour
	}
	if cfg.FirstRetry <= 0 {
		cfg.FirstRetry = time.Second
	}
	if cfg.MaxRetry <= 0 {
		cfg.MaxRetry = 10 * time.Minute
	}
	if cfg.QueueEvents <= 0 {
		cfg.QueueEvents = 10_000
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	d := &Dispatcher{cfg: cfg, st: st, byID: map[int64]*hook{}}
	d.client = &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{
			Proxy:                 nil, // the address checked is the one connected to
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, Control: d.checkAddress}).DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	d.m = newMetrics(cfg.Registerer, d)
	d.hooks.Store(&[]*hook{})
	return d, nil
}

// Secret is the signing secret of a webhook of nonce under key, as the
// Standard Webhooks specification spells one: "whsec_" and base64. It is
// shown once, when the webhook is created, and never stored.
func Secret(key []byte, nonce string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("marquee webhook secret\x00" + nonce))
	return "whsec_" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// NewNonce returns a fresh nonce for a webhook's secret.
func NewNonce() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Secret is the signing secret of a webhook of nonce (see Secret).
func (d *Dispatcher) Secret(nonce string) string { return Secret(d.cfg.Key, nonce) }

// NewNonce returns a fresh nonce for a webhook's secret (see NewNonce).
func (d *Dispatcher) NewNonce() string { return NewNonce() }

// signer signs w's deliveries with its secret.
func (d *Dispatcher) signer(w marquee.Webhook) (*standardwebhooks.Webhook, error) {
	s, err := standardwebhooks.NewWebhook(d.Secret(w.Nonce))
	if err != nil {
		return nil, fmt.Errorf("webhook %d: %w", w.ID, err)
	}
	return s, nil
}

// ErrForbiddenAddress is a delivery's error when the receiver's address
// is one deliveries may not reach.
var ErrForbiddenAddress = errors.New("the receiver's address is loopback, private, link-local or otherwise internal: refused (server-side request forgery); the operator may allow it with -webhooks-allow-private")

// Forbidden reports whether deliveries may not reach addr: loopback,
// private, link-local, multicast, unspecified and reserved ranges, and an
// IPv6 address that embeds an IPv4 one which is forbidden (NAT64
// 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32, IPv4-compatible
// ::a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d), since a gateway on
// the path delivers to that IPv4 address. NAT64's local-use prefix
// 64:ff9b:1::/48 and the old site-local fec0::/10 are forbidden whole.
func Forbidden(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.Is6() {
		if nat64Local.Contains(addr) || siteLocal.Contains(addr) {
			return true
		}
		for _, v4 := range embeddedV4(addr) {
			if Forbidden(v4) {
				return true
			}
		}
	}
	return addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() || !addr.IsValid() ||
		sharedSpace.Contains(addr) || thisNetwork.Contains(addr) || addr == broadcast
}

// embeddedV4 returns the IPv4 addresses an IPv6 address carries by a
// translation or tunnelling convention.
func embeddedV4(a netip.Addr) []netip.Addr {
	b := a.As16()
	v4 := func(x [4]byte) netip.Addr { return netip.AddrFrom4(x) }
	switch {
	case nat64.Contains(a), ipv4Compatible.Contains(a), ipv4Translated.Contains(a):
		return []netip.Addr{v4([4]byte(b[12:16]))}
	case sixToFour.Contains(a):
		return []netip.Addr{v4([4]byte(b[2:6]))}
	case teredo.Contains(a): // the server's address, and the client's, obfuscated
		return []netip.Addr{v4([4]byte(b[4:8])), v4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})}
	}
	return nil
}

var (
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
	ipv4Compatible = netip.MustParsePrefix("::/96")
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	siteLocal      = netip.MustParsePrefix("fec0::/10")
)

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	broadcast   = netip.MustParseAddr("255.255.255.255")
)

// checkAddress is the dialer's check of the address it is about to
// connect to (resolved).
func (d *Dispatcher) checkAddress(network, address string, c syscall.RawConn) error {
	if d.cfg.AllowPrivate {
		return nil
	}
	return CheckDial(network, address, c)
}

// CheckDial is a net.Dialer's Control that refuses a Forbidden address
// (ErrForbiddenAddress): what a dialer of URLs an outsider names uses.
func CheckDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || Forbidden(ap.Addr()) {
		return ErrForbiddenAddress
	}
	return nil
}

// typeBit is the bit of an event type a webhook can want (0: none).
func typeBit(t []byte) uint8 {
	for i, e := range marquee.WebhookEvents {
		if string(t) == e {
			return 1 << i
		}
	}
	return 0
}

// Reload reads the webhooks from the store: new active ones start, changed
// ones take their new definition (keeping their queue), disabled and
// deleted ones stop (dropping theirs).
func (d *Dispatcher) Reload(ctx context.Context) error {
	ws, err := d.st.Webhooks(ctx)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	keep := map[int64]bool{}
	var active []*hook
	for _, w := range ws {
		if w.State != marquee.WebhookActive {
			continue
		}
		keep[w.ID] = true
		signer, err := d.signer(w)
		if err != nil {
			return err
		}
		var bits uint8
		for _, e := range w.Events {
			bits |= typeBit([]byte(e))
		}
		h := d.byID[w.ID]
		if h == nil {
			h = &hook{wake: make(chan struct{}, 1), stop: make(chan struct{})}
			d.byID[w.ID] = h
			h.mu.Lock()
			h.w, h.events, h.signer = w, bits, signer
			h.mu.Unlock()
			d.wg.Go(func() { d.run(h) })
		} else {
			h.mu.Lock()
			h.w, h.events, h.signer = w, bits, signer
			h.mu.Unlock()
		}
		active = append(active, h)
	}
	for id, h := range d.byID {
		if !keep[id] {
			close(h.stop)
			delete(d.byID, id)
		}
	}
	d.hooks.Store(&active)
	return nil
}

// Written queues, for each webhook that wants it, every line of lines
// (events the collector wrote) of a type, and for a target, it asks for.
func (d *Dispatcher) Written(_ string, _ int64, lines []byte) {
	hooks := *d.hooks.Load()
	if len(hooks) == 0 {
		return
	}
	var f eventline.Fields
	for line := range bytes.Lines(lines) {
		if line = bytes.TrimSuffix(line, []byte("\n")); !eventline.Scan(line, &f) {
			continue
		}
		bit := typeBit(f[eventline.Type])
		if bit == 0 {
			continue
		}
		for _, h := range hooks {
			if h.wants(bit, &f) {
				d.enqueue(h, line)
			}
		}
	}
}

// SiteQualityAlarm queues a site.quality event — {"type", "site", and
// the alarm's figures (marquee.QualityAlarm)} — for every webhook that
// asks for it (webhooks without a target: a site's alarm is the
// network's).
func (d *Dispatcher) SiteQualityAlarm(site string, a marquee.QualityAlarm) {
	event, err := json.Marshal(struct {
		Type string `json:"type"`
		Site string `json:"site"`
		marquee.QualityAlarm
	}{marquee.WebhookSiteQuality, site, a})
	if err != nil {
		return
	}
	bit := typeBit([]byte(marquee.WebhookSiteQuality))
	for _, h := range *d.hooks.Load() {
		h.mu.Lock()
		wants := h.events&bit != 0 && h.w.Link == "" && h.w.AdID == 0 && h.w.CampaignID == 0
		h.mu.Unlock()
		if wants {
			d.enqueue(h, event)
		}
	}
}

// wants reports whether h asks for an event of type bit with fields f.
func (h *hook) wants(bit uint8, f *eventline.Fields) bool {
	h.mu.Lock()
	w, events := &h.w, h.events
	defer h.mu.Unlock()
	switch {
	case events&bit == 0:
		return false
	case !w.Unverified && string(f[eventline.Verified]) != "1" && string(f[eventline.Redirected]) != "1":
		return false // an event the server does not vouch for (a beacon; a click without its impression)
	case w.Link != "":
		return string(f[eventline.Link]) == w.Link
	case w.AdID != 0:
		return idIs(f[eventline.Ad], w.AdID)
	case w.CampaignID != 0:
		return idIs(f[eventline.Campaign], w.CampaignID)
	}
	return true
}

func idIs(v []byte, id int64) bool {
	n, err := strconv.ParseInt(string(v), 10, 64)
	return err == nil && n == id
}

// enqueue adds a copy of line to h's queue, dropping its oldest event
// when it is full.
func (d *Dispatcher) enqueue(h *hook, line []byte) {
	h.mu.Lock()
	if len(h.queue) >= d.cfg.QueueEvents {
		h.queue = slices.Delete(h.queue, 0, 1)
		d.m.dropped.Inc()
	}
	if len(h.queue) == 0 {
		h.first = d.cfg.Now()
	}
	h.queue = append(h.queue, append([]byte(nil), line...))
	full := len(h.queue) >= d.cfg.BatchEvents
	h.mu.Unlock()
	if full {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

// run delivers h's queue in batches until h stops.
func (d *Dispatcher) run(h *hook) {
	tick := time.NewTicker(d.cfg.BatchWait / 4)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.wake:
		case <-tick.C:
		}
		for {
			h.mu.Lock()
			ready := len(h.queue) >= d.cfg.BatchEvents || len(h.queue) > 0 && d.cfg.Now().Sub(h.first) >= d.cfg.BatchWait
			var batch [][]byte
			if ready {
				n := min(len(h.queue), d.cfg.BatchEvents)
				batch = slices.Clone(h.queue[:n])
				h.queue = slices.Delete(h.queue, 0, n)
				h.first = d.cfg.Now()
			}
			h.mu.Unlock()
			if !ready {
				break
			}
			if !d.deliver(h, batch) {
				return
			}
		}
	}
}

// payload is a delivery's body: {"type","timestamp","data":{"webhookId",
// "events":[…]}}, the events as the files hold them.
func payload(id int64, at time.Time, events [][]byte) []byte {
	b := []byte(`{"type":"marquee.events","timestamp":"`)
	b = at.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `","data":{"webhookId":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"events":[`...)
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, "]}}"...)
}

// deliver sends batch to h until it is taken (a 2xx answer), retrying
// with backoff; after RetryFor without success it disables the webhook
// and returns false (h stops). It returns false too when h stops
// meanwhile.
func (d *Dispatcher) deliver(h *hook, batch [][]byte) bool {
	h.mu.Lock()
	id := h.w.ID
	h.mu.Unlock()
	msgID := "msg_" + NewNonce()
	body := payload(id, d.cfg.Now(), batch)
	start := d.cfg.Now()
	backoff := d.cfg.FirstRetry
	for attempt := 1; ; attempt++ {
		del := d.send(h, msgID, body, attempt, len(batch))
		if del.Error == "" {
			return true
		}
		if d.cfg.Now().Sub(start) >= d.cfg.RetryFor {
			reason := fmt.Sprintf("no delivery succeeded for %s (%d attempts); the last: %s", d.cfg.RetryFor, attempt, del.Error)
			d.cfg.Log.Warn("webhook disabled after repeated failures", "webhook", id, "reason", reason)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := d.st.SetWebhookState(ctx, id, marquee.WebhookDisabled, reason); err != nil {
				d.cfg.Log.Error("webhook could not be disabled; its deliveries go on", "webhook", id, "err", err)
				cancel()
				continue
			}
			cancel()
			d.m.disabled.Inc()
			return false
		}
		wait := time.Duration(mrand.Int64N(int64(backoff)) + 1) // full jitter
		backoff = min(2*backoff, d.cfg.MaxRetry)
		select {
		case <-h.stop:
			return false
		case <-time.After(wait):
		}
	}
}

// send makes one attempt and logs it (in the store and the metrics).
func (d *Dispatcher) send(h *hook, msgID string, body []byte, attempt, events int) marquee.WebhookDelivery {
	h.mu.Lock()
	w, signer := h.w, h.signer
	h.mu.Unlock()
	at := d.cfg.Now()
	del := marquee.WebhookDelivery{WebhookID: w.ID, MessageID: msgID, At: at, Attempt: attempt, Events: events}
	status, err := d.post(w.URL, signer, msgID, at, body)
	del.Status, del.LatencyMS = status, d.cfg.Now().Sub(at).Milliseconds()
	switch {
	case err != nil:
		del.Error = err.Error()
	case status < 200 || status > 299:
		del.Error = "status " + strconv.Itoa(status)
	}
	result := "ok"
	if del.Error != "" {
		result = "failed"
	}
	d.m.deliveries.WithLabelValues(result).Inc()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := d.st.AddWebhookDeliveries(ctx, []marquee.WebhookDelivery{del}); err != nil {
		d.cfg.Log.Warn("webhook delivery not logged", "webhook", w.ID, "err", err)
	}
	cancel()
	return del
}

// post POSTs body to url, signed, and returns the answer's status.
func (d *Dispatcher) post(url string, signer *standardwebhooks.Webhook, msgID string, at time.Time, body []byte) (int, error) {
	sig, err := signer.Sign(msgID, at, body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "marquee-webhooks")
	req.Header.Set(standardwebhooks.HeaderWebhookID, msgID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := d.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrForbiddenAddress) {
			return 0, ErrForbiddenAddress
		}
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Test sends webhook id one test event now (whatever its state), logs
// the attempt and returns it.
func (d *Dispatcher) Test(ctx context.Context, id int64) (marquee.WebhookDelivery, error) {
	w, err := d.st.Webhook(ctx, id)
	if err != nil {
		return marquee.WebhookDelivery{}, err
	}
	signer, err := d.signer(w)
	if err != nil {
		return marquee.WebhookDelivery{}, err
	}
	now := d.cfg.Now()
	event, _ := json.Marshal(map[string]string{"type": "test", "receivedAt": now.UTC().Format(time.RFC3339Nano), "id": "test_" + NewNonce()})
	h := &hook{w: w, signer: signer}
	return d.send(h, "msg_"+NewNonce(), payload(w.ID, now, [][]byte{event}), 1, 1), nil
}

// Finished is part of collector.Forwarder: nothing to do.
func (d *Dispatcher) Finished(string, int64) {}

// Flush is part of collector.Forwarder: webhooks never hold a file back.
func (d *Dispatcher) Flush(context.Context) error { return nil }

// Full is part of collector.Forwarder: webhooks never hold events back.
func (d *Dispatcher) Full() bool { return false }

// Name is part of collector.Forwarder.
func (d *Dispatcher) Name() string { return "webhooks" }

// Up is part of collector.Forwarder: a failing receiver is its webhook's
// matter, never the instance's.
func (d *Dispatcher) Up() bool { return true }

// queued is the events queued for every webhook.
func (d *Dispatcher) queued() int {
	n := 0
	for _, h := range *d.hooks.Load() {
		h.mu.Lock()
		n += len(h.queue)
		h.mu.Unlock()
	}
	return n
}

// Close stops every webhook's deliveries; what they held is dropped (it
// is in the event files).
func (d *Dispatcher) Close() {
	d.mu.Lock()
	for id, h := range d.byID {
		close(h.stop)
		delete(d.byID, id)
	}
	d.hooks.Store(&[]*hook{})
	d.mu.Unlock()
	d.wg.Wait()
}

// Apply reads the webhooks again after a batch of the changelog that
// changes one, and on a reload (it is a marquee.Applier). After a change a
// failure keeps the ones in force until the next change or reload; a
// reload's failure is the caller's.
func (d *Dispatcher) Apply(ctx context.Context, b *marquee.Batch) error {
	if !b.Reload && !b.Webhooks {
		return nil
	}
	err := d.Reload(ctx)
	if err != nil && !b.Reload {
		d.cfg.Log.Warn("webhooks not read again after a change; the ones before stay in force", "err", err)
		return nil
	}
	return err
}
