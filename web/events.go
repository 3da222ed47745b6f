package web

import (
	"bytes"
	"fmt"
	"net/netip"
	"strconv"
	"sync"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/eventline"
	"marquee/ivt"
	"marquee/privacy"
	"marquee/serve"
)

// gif1x1 is a transparent 1×1 GIF, for pixels.
var gif1x1 = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// eventLines writes the event lines of requests (serve.Lines) with the
// client's address as the edge reads it. The event beacons, the
// redirect's clicks and the tracking URLs' events all write through it.
type eventLines struct {
	requester // the client's address
	*serve.Lines
	ivt *ivt.Filter
}

// appendHead opens the event line of a request (serve.Lines.AppendHead),
// with why it is invalid traffic when it is (its "ivt": what it says of
// itself and where it comes from, ivt.Filter.Request).
func (e *eventLines) appendHead(dst []byte, ctx *fasthttp.RequestCtx, lim privacy.Limit) []byte {
	ip := e.addr(ctx)
	dst = e.AppendHead(dst, ctx.Time(), ip, ctx.UserAgent(), lim)
	q := ivt.Request{UserAgent: ctx.UserAgent(), IP: ip, SecPurpose: ctx.Request.Header.Peek("Sec-Purpose"), Purpose: ctx.Request.Header.Peek("Purpose")}
	if why := e.ivt.Request(&q); why != ivt.Human {
		dst = eventline.AppendPlain(dst, "ivt", why.Name())
	}
	return dst
}

// edge is what serving reads of the request beyond its body
// (serve.Edge); origin, when not nil, receives the request's scheme and
// host (the head of its absolute URLs).
func (r requester) edge(ctx *fasthttp.RequestCtx, origin []byte) serve.Edge {
	h := &ctx.Request.Header
	e := serve.Edge{Time: ctx.Time(), IP: r.addr(ctx), UserAgent: ctx.UserAgent(), Referer: h.Referer(),
		AcceptLanguage: h.Peek(fasthttp.HeaderAcceptLanguage), GPC: sentGPC(ctx), Conn: ctx.ConnID(),
		SecPurpose: h.Peek("Sec-Purpose"), Purpose: h.Peek("Purpose"), PageOrigin: h.Peek("Origin")}
	if origin != nil {
		e.Origin = r.appendOrigin(origin, ctx)
	}
	return e
}

// signal is what a request says about consent: its Sec-GPC header, and
// the consent parameters of its query (queryConsent; gpp, gpp_sid and
// us_privacy).
func signal(ctx *fasthttp.RequestCtx) privacy.Signal {
	args := ctx.QueryArgs()
	gdpr, tcf := queryConsent(args)
	return privacy.Signal{GPC: sentGPC(ctx), GDPR: gdpr, TCF: tcf, GPP: args.Peek("gpp"), GPPSID: args.Peek("gpp_sid"), USP: args.Peek("us_privacy")}
}

// queryConsent reads the consent parameters of a query (beacons, GET
// decisions, VAST players' macros): gdpr (privacy.ParseGDPR) and
// gdpr_consent (a TCF v2 string).
func queryConsent(args *fasthttp.Args) (gdpr int8, tcf []byte) {
	return privacy.ParseGDPR(args.Peek("gdpr")), args.Peek("gdpr_consent")
}

// sentGPC reports a Sec-GPC: 1 header (Global Privacy Control).
func sentGPC(ctx *fasthttp.RequestCtx) bool {
	return string(ctx.Request.Header.Peek("Sec-GPC")) == "1"
}

// clientIP is the connection's address, or, when that is a trusted proxy,
// the nearest address in X-Forwarded-For that is not one.
func clientIP(ctx *fasthttp.RequestCtx, trusted []netip.Prefix) netip.Addr {
	ip, _ := netip.AddrFromSlice(ctx.RemoteIP())
	ip = ip.Unmap()
	if !isTrusted(ip, trusted) {
		return ip
	}
	xff := ctx.Request.Header.Peek("X-Forwarded-For")
	for len(xff) > 0 {
		i := bytes.LastIndexByte(xff, ',')
		hop := bytes.TrimSpace(xff[i+1:])
		xff = xff[:max(i, 0)]
		a, err := netip.ParseAddr(string(hop))
		if err != nil {
			break
		}
		ip = a.Unmap()
		if !isTrusted(ip, trusted) {
			break
		}
	}
	return ip
}

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// handleEventGet serves GET /e?k=v&…: one event of string fields. It
// answers 204, or a 1×1 GIF to a client that accepts only images.
func handleEventGet(e *eventLines) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		bp := linePool.Get().(*[]byte)
		defer linePool.Put(bp)
		lim := e.Policy().Decide(signal(ctx)).EventLimit()
		line := e.appendHead((*bp)[:0], ctx, lim)
		args := ctx.QueryArgs()
		if n := args.Len(); n == 0 || n > marquee.MaxEventFields {
			return marquee.InvalidEvent("query", fmt.Sprintf("an event needs 1-%d fields, got %d", marquee.MaxEventFields, n))
		}
		var problems marquee.Problems
		var keys [marquee.MaxEventFields][]byte
		i, at := 0, ctx.Time()
		// VisitAll, not the All iterator it is deprecated for: on fasthttp
		// v1.74 ranging over All moves the loop's variables to the heap (6
		// allocations a request, TestEventGetAllocatesNothing); VisitAll's
		// callback does not escape.
		//lint:ignore SA1019 see above
		args.VisitAll(func(k, v []byte) {
			switch path, msg := marquee.CheckBeaconField(i, keys[:i], k, v); {
			case path != "":
				problems = marquee.AddEventProblem(problems, path, msg)
			case problems != nil || marquee.IsConsentKey(k):
			case string(k) == "uid":
				line = e.AppendUID(line, v, at, lim)
			default:
				line = eventline.AppendString(line, k, e.Policy().RedactEmails(v))
			}
			keys[i] = k
			i++
		})
		if problems != nil {
			return marquee.Invalid("invalid event", problems)
		}
		line = eventline.End(line)
		*bp = line
		if err := e.Sink().Append(ctx.ConnID(), line, 1); err != nil {
			return err
		}
		if acceptsOnlyImages(ctx.Request.Header.Peek(fasthttp.HeaderAccept)) {
			ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
			ctx.SetContentType("image/gif")
			ctx.SetBody(gif1x1)
			return nil
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// acceptsOnlyImages reports an Accept header that names image types and
// nothing a 204 would suit (no */*, no text or JSON): what an <img> sends.
func acceptsOnlyImages(accept []byte) bool {
	if !bytes.Contains(accept, []byte("image/")) {
		return false
	}
	for part := range bytes.SplitSeq(accept, []byte(",")) {
		media, _, _ := bytes.Cut(part, []byte(";"))
		media = bytes.TrimSpace(media)
		if len(media) > 0 && !bytes.HasPrefix(media, []byte("image/")) {
			return false
		}
	}
	return true
}

// handleEventPost serves POST /e: one JSON object, a JSON array of them, or
// NDJSON (application/json, application/x-ndjson, or text/plain as
// navigator.sendBeacon sends), at most MaxEventsPerPost events in
// MaxEventsBody bytes. Either every event is accepted (202) or none is.
func handleEventPost(e *eventLines) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		if err := checkEventBody(ctx); err != nil {
			return err
		}
		bp := linePool.Get().(*[]byte)
		defer linePool.Put(bp)
		lim, at := e.Policy().Decide(signal(ctx)).EventLimit(), ctx.Time()
		lines, n, err := eventline.AppendEvents((*bp)[:0], ctx.PostBody(), eventline.Writer{
			Head:  func(dst []byte) []byte { return e.appendHead(dst, ctx, lim) },
			UID:   func(dst, uid []byte) []byte { return e.AppendUID(dst, uid, at, lim) },
			Value: e.Policy().RedactEmails,
		})
		*bp = lines
		if err != nil {
			return err
		}
		if err := e.Sink().Append(ctx.ConnID(), lines, n); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusAccepted)
		ctx.SetContentTypeBytes(contentTypeJSON)
		ctx.SetBodyString(`{"accepted":` + strconv.Itoa(n) + `}`)
		return nil
	}
}

func checkEventBody(ctx *fasthttp.RequestCtx) error {
	return checkBody(ctx, marquee.MaxEventsBody, func(media []byte) bool {
		switch string(media) {
		case "application/json", "application/x-ndjson", "application/ndjson", "text/plain":
			return true
		}
		return false
	}, "content type %q: send application/json, application/x-ndjson or text/plain")
}
