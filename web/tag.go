package web

import (
	"bytes"
	crand "crypto/rand"
	"encoding/json"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/delivery"
	"marquee/demand"
	"marquee/macro"
	"marquee/tag"
	"marquee/tracking"
)

// The ad tag's routes: the script (package tag), and the frames HTML
// creatives render in (docs/tag.md).

// tagPath is the path of the tag's immutable copy, /tag/{version}.js.
var tagPath = "/tag/" + tag.Tag.Version + ".js"

// scriptETags are the ETags of the tag's scripts (each version, quoted),
// made once.
var scriptETags = map[*tag.Script][]byte{
	tag.Tag:    []byte(`"` + tag.Tag.Version + `"`),
	tag.Prebid: []byte(`"` + tag.Prebid.Version + `"`),
}

// handleTagScript serves the ad tag: at /t.js for 5 minutes (the address
// a publisher pastes, so a new version reaches pages soon), at its
// versioned path for a year (it never changes there); and its Prebid.js
// glue at /pb.js for 5 minutes (the tag loads it on pages that run
// Prebid.js). Each is gzipped for clients that take gzip, and answers 304
// to a copy the client has.
func handleTagScript() handler {
	return func(ctx *fasthttp.RequestCtx) error {
		h := &ctx.Response.Header
		script := tag.Tag
		switch string(ctx.Path()) {
		case "/t.js":
			h.Set(fasthttp.HeaderCacheControl, "public, max-age=300")
		case "/pb.js":
			script = tag.Prebid
			h.Set(fasthttp.HeaderCacheControl, "public, max-age=300")
		case tagPath:
			h.Set(fasthttp.HeaderCacheControl, "public, max-age=31536000, immutable")
		default:
			return marquee.Errorf(marquee.KindNotFound, "no tag %s: the tag is at /t.js (this version at %s)", ctx.Path(), tagPath)
		}
		etag := scriptETags[script]
		h.SetBytesV(fasthttp.HeaderETag, etag)
		h.Set(fasthttp.HeaderVary, "Accept-Encoding")
		anyOrigin(ctx)
		ctx.SetContentType("text/javascript; charset=utf-8")
		if bytes.Contains(ctx.Request.Header.Peek(fasthttp.HeaderIfNoneMatch), etag) {
			ctx.SetStatusCode(fasthttp.StatusNotModified)
			return nil
		}
		if ctx.Request.Header.HasAcceptEncoding("gzip") {
			h.Set(fasthttp.HeaderContentEncoding, "gzip")
			ctx.SetBody(script.Gzip)
			return nil
		}
		ctx.SetBody(script.Source)
		return nil
	}
}

// FramePrefix starts the path of an HTML creative's frame: /f/{token},
// the token of the decision that chose it.
const FramePrefix = "/f/"

// frameSandbox is what an HTML creative may do, in the frame's CSP as in
// the tag's iframe: run scripts and open windows, never be of the
// publisher's origin or the ad server's. A window it opens keeps the
// sandbox (no allow-popups-to-escape-sandbox): with it, a popup the ad
// opens could set opener.top.location and take the publisher's tab
// (TestTagPopupCannotNavigatePage).
const frameSandbox = "sandbox allow-scripts allow-popups"

// BidFramePath is the page that draws a header-bidding bid in a frame of
// its own origin (the creative origin, or the ad server's), never the
// page's: the tag frames it sandboxed, with the bid's Prebid ad id in the
// fragment.
const BidFramePath = "/f/pb"

// bidFrame is BidFramePath's page: Prebid's cross-origin rendering
// protocol, as its Universal Creative speaks it — a "Prebid Request" for
// the ad id over a MessageChannel (the frame's origin is opaque: only a
// port can answer it), the "Prebid Response" drawn into a frame of the
// bid's size inside this one (its markup or its URL), then a "Prebid
// Event" saying it rendered (or failed), which Prebid turns into
// adRenderSucceeded (or adRenderFailed) on the page.
const bidFrame = `<!doctype html><html><head><meta charset="utf-8"><title>Advertisement</title>` +
	`<style>html,body{margin:0;padding:0;overflow:hidden}iframe{border:0;display:block}</style></head><body><script>
(function () {
  var adId = decodeURIComponent(location.hash.slice(1)), ch = new MessageChannel();
  function send(msg) { msg.adId = adId; parent.postMessage(JSON.stringify(msg), '*'); }
  ch.port1.onmessage = function (ev) {
    var data;
    try { data = JSON.parse(ev.data); } catch (e) { return; }
    if (data.message !== 'Prebid Response' || data.adId !== adId) return;
    if (!data.ad && !data.adUrl) {
      send({ message: 'Prebid Event', event: 'adRenderFailed', info: { reason: 'noAd', message: 'the bid has no markup' } });
      return;
    }
    var f = document.createElement('iframe');
    f.setAttribute('scrolling', 'no');
    f.width = data.width || innerWidth;
    f.height = data.height || innerHeight;
    if (data.ad) f.srcdoc = data.ad; else f.src = data.adUrl;
    document.body.appendChild(f);
    send({ message: 'Prebid Event', event: 'adRenderSucceeded' });
  };
  parent.postMessage(JSON.stringify({ message: 'Prebid Request', adId: adId }), '*', [ch.port2]);
})();
</script></body></html>`

// handleBidFrame serves GET /f/pb: bidFrame, sandboxed by its CSP however
// it is framed, cached a day (it is the same for every bid).
func handleBidFrame() handler {
	return func(ctx *fasthttp.RequestCtx) error {
		h := &ctx.Response.Header
		h.Set("Content-Security-Policy", frameSandbox)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "public, max-age=86400")
		ctx.SetContentType("text/html; charset=utf-8")
		ctx.SetBodyString(bidFrame)
		return nil
	}
}

// handleFrame serves GET /f/{token}: the HTML creative of the decision's
// ad as a document of its own, sandboxed by its CSP whoever frames it,
// with {clickUrl} in the creative replaced by the decision's signed click
// URL. A token that is not ours is a 400, an expired one a 410. A
// preview's token answers the preview page (servePreview), its images
// from assets (the public origin; "": the frame's own).
func handleFrame(engine *delivery.Engine, signer *tracking.Signer, partners *demand.Exchange, assets string, now func() time.Time) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		token := pathParam(ctx, 0)
		p, err := signer.Open(token, now())
		if err != nil {
			return err
		}
		if p.Ad == 0 && p.Bidder == "" { // a preview's token (handleCreativePreview)
			servePreview(ctx, assets)
			return nil
		}
		if p.Ad == 0 { // a demand partner's bid: its markup, kept by the instance that decided
			k, ok := partners.Markup(p.Decision)
			if !ok {
				return marquee.Errorf(marquee.KindNotFound, "this bid's markup is not kept here (docs/demand.md#across-instances)")
			}
			serveFrame(ctx, k.Markup)
			return nil
		}
		a, ok := engine.Plan().Ad(p.Ad)
		if !ok || a.Creative == nil || a.Creative.Type != marquee.CreativeHTML && a.Creative.Type != marquee.CreativeTag {
			return marquee.Errorf(marquee.KindNotFound, "this ad has no HTML creative (now)")
		}
		html := a.Creative.HTML
		var click []byte
		if plainHost(ctx.Host()) {
			// A plain host and a base64url token: nothing in it to escape.
			click = tracking.AppendPath(appendOrigin(nil, ctx), tracking.Click, token)
		}
		switch {
		case a.Creative.Type == marquee.CreativeTag:
			// A third-party tag's macros, the page's values from the frame
			// URL's query (frameQuery), each escaped for HTML.
			q := ctx.QueryArgs()
			v := macro.Values{Random: mrand.Uint64(), Timestamp: now(), PageURL: string(q.Peek("u")), ClickURL: string(click),
				GDPR: string(q.Peek("g")), GDPRConsent: string(q.Peek("c")), Placement: p.Placement, Campaign: p.Campaign, Ad: p.Ad}
			html = string(macro.Expand(nil, html, &v, macro.HTML))
		case a.Creative.ClickURL != "" && click != nil:
			html = strings.ReplaceAll(html, "{clickUrl}", string(click))
		}
		serveFrame(ctx, html+clickTrackerScript(a.Creative.ClickTrackers, &p, click))
		return nil
	}
}

// serveFrame answers body as a frame's document, sandboxed by its CSP
// whoever frames it, never stored.
func serveFrame(ctx *fasthttp.RequestCtx, body string) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", frameSandbox)
	noStore(ctx)
	h.Set("Referrer-Policy", "no-referrer")
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBodyString(`<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;padding:0;overflow:hidden}</style></head><body>` +
		body + `</body></html>`)
}

// clickTrackerScript is the script a frame ends with when its creative has
// click trackers: at the first click in the frame it fires them (their
// macros filled for the decision of p), once. Empty without any.
func clickTrackerScript(trackers []string, p *tracking.Payload, click []byte) string {
	if len(trackers) == 0 {
		return ""
	}
	v := macro.Values{Random: mrand.Uint64(), Timestamp: p.Issued, ClickURL: string(click), Placement: p.Placement, Campaign: p.Campaign, Ad: p.Ad}
	urls := make([]string, len(trackers))
	for i, t := range trackers {
		urls[i] = string(macro.Expand(nil, t, &v, macro.URL))
	}
	j, _ := json.Marshal(urls) // escapes <, > and &: nothing ends the script
	return `<script>(function(u){addEventListener('click',function f(){removeEventListener('click',f,true);u.forEach(function(x){try{fetch(x,{mode:'no-cors',credentials:'omit',keepalive:true})}catch(e){}})},true)})(` +
		string(j) + `)</script>`
}

// handlePreflight answers a browser's CORS preflight of the decision
// route from any origin: a page may POST a JSON body to it (the tag sends
// none and needs no preflight). It holds no cookie or credential.
func handlePreflight() handler {
	return func(ctx *fasthttp.RequestCtx) error {
		anyOrigin(ctx)
		h := &ctx.Response.Header
		h.Set(fasthttp.HeaderAccessControlAllowMethods, "GET, POST")
		h.Set(fasthttp.HeaderAccessControlAllowHeaders, "Content-Type")
		h.Set(fasthttp.HeaderAccessControlMaxAge, "86400")
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// previewPage is an HTML creative's preview (the console's editor and
// approvals): it waits for its parent's HTML (a string, from its parent
// only), then replaces itself with it, as handleFrame wraps a creative.
const previewPage = `<!doctype html><html><head><meta charset="utf-8"><title>Advertisement</title></head><body><script>
addEventListener('message', function (e) {
  if (e.source !== parent || typeof e.data !== 'string') return;
  document.open();
  document.write('<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;padding:0;overflow:hidden}</style></head><body>' + e.data + '</body></html>');
  document.close();
});
parent.postMessage('marquee-preview-ready', '*');
</script></body></html>`

// servePreview answers a preview's frame: at a URL shaped as a serving
// frame's (/f/{token}, on the creative origin), so that a creative cannot
// tell its reviewer from its audience by where it runs, and sandboxed as
// one — but unable to call home: no fetch, XHR, WebSocket or beacon
// (connect-src 'none'), no image but the assets' origin's and data:
// URLs. A script the creative loads still loads, as it would when served.
func servePreview(ctx *fasthttp.RequestCtx, assets string) {
	if assets == "" {
		assets = string(appendOrigin(nil, ctx))
	}
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", frameSandbox+"; connect-src 'none'; img-src "+assets+" data:")
	noStore(ctx)
	h.Set("Referrer-Policy", "no-referrer")
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBodyString(previewPage)
}

// previewLife is how long a preview's frame URL opens.
const previewLife = time.Hour

// handleCreativePreview serves GET /api/v1/creative-preview: the URL of a
// frame that draws an HTML creative its parent sends it (servePreview),
// on the creative origin (origin; "": this server's), signed as a
// serving frame's token is and good for an hour: {"url", "expiresAt"}.
func handleCreativePreview(signer *tracking.Signer, origin string, rq requester, now func() time.Time) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		t := now()
		p := tracking.Payload{Issued: t, Expires: t.Add(previewLife)}
		if _, err := crand.Read(p.Decision[:]); err != nil {
			return err
		}
		u := []byte(origin)
		if origin == "" {
			u = rq.appendOrigin(u, ctx)
		}
		u = signer.Append(append(u, "/f/"...), &p)
		writeJSON(ctx, fasthttp.StatusOK, struct {
			URL       string    `json:"url"`
			ExpiresAt time.Time `json:"expiresAt"`
		}{string(u), p.Expires})
		return nil
	}
}
