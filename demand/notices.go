package demand

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"marquee/webhooks"
)

// Notices: a bid's nurl when it wins, its lurl when it loses (with the
// loss code), its burl when its impression is verified (a billing notice:
// Marquee bills only verified impressions). They are sent off the
// decision's path by a few workers from a bounded queue (a full queue
// drops the notice, counted), each GET bounded in time, never to an
// internal address (the URLs are the buyer's, not the operator's) unless
// Config.AllowPrivateNotices.

const (
	noticeQueue   = 4096
	noticeWorkers = 4
	noticeTimeout = 5 * time.Second
)

// OpenRTB 2.6's loss reason codes Marquee sends (${AUCTION_LOSS}).
const (
	LossBelowFloor  = 100 // under the placement's floor
	LossOutbid      = 102 // lost to a higher bid or a campaign ahead of it
	LossToDeal      = 103 // lost to a bid of a deal
	LossInternal    = 1   // not served for another reason
	lossNotReported = 0
)

type notice struct {
	partner, url string
}

// noticeClient is the client of notices: GETs bounded in time, no
// redirect followed, internal addresses refused unless allowPrivate.
func noticeClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	if !allowPrivate {
		dialer.Control = webhooks.CheckDial
	}
	return &http.Client{Timeout: noticeTimeout, Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext,
		MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 2 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Macros fills the OpenRTB substitution macros of a notice or markup u
// for bid b: its price as bid (the clearing price of a first-price
// auction), the auction's, impression's, bid's and seat's ids, the
// currency and the loss code (0: left as 0).
func Macros(u string, b *Bid, currency string, loss int) string {
	if !strings.Contains(u, "${AUCTION_") {
		return u
	}
	return strings.NewReplacer(
		"${AUCTION_PRICE}", strconv.FormatFloat(b.Raw.Price, 'f', -1, 64),
		"${AUCTION_ID}", b.AuctionID,
		"${AUCTION_IMP_ID}", b.Raw.ImpID,
		"${AUCTION_BID_ID}", b.Raw.ID,
		"${AUCTION_SEAT_ID}", b.Seat,
		"${AUCTION_AD_ID}", b.Raw.AdID,
		"${AUCTION_CURRENCY}", currency,
		"${AUCTION_LOSS}", strconv.Itoa(loss),
		"${AUCTION_MBR}", "",
	).Replace(u)
}

// Notify queues a GET of url for partner (a win, loss or billing notice,
// its macros filled): dropped, and counted, when the queue is full.
func (x *Exchange) Notify(partner, url string) {
	if url == "" {
		return
	}
	select {
	case x.notices <- notice{partner, url}:
	default:
		x.cfg.Log.Warn("demand notice dropped: the queue is full", "partner", partner)
	}
}

// Win notes that b won: its win counted, its nurl called (unless its
// markup is served through the nurl, which the player or page then
// calls).
func (x *Exchange) Win(b *Bid, callNURL bool) {
	x.Won(b.Partner)
	if callNURL {
		x.Notify(b.Partner, Macros(b.Raw.NURL, b, x.cfg.Currency, lossNotReported))
	}
}

// Lose calls b's lurl with the loss code.
func (x *Exchange) Lose(b *Bid, loss int) {
	x.Notify(b.Partner, Macros(b.Raw.LURL, b, x.cfg.Currency, loss))
}

// sendNotices sends queued notices until ctx ends.
func (x *Exchange) sendNotices(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-x.notices:
			if err := x.send(ctx, n.url); err != nil {
				x.cfg.Log.Debug("demand notice failed", "partner", n.partner, "err", err)
			}
		}
	}
}

func (x *Exchange) send(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil || req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("not an http or https URL: %q", url)
	}
	resp, err := x.cfg.Notices.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}
