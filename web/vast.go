package web

import (
	"context"
	"encoding/hex"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/delivery"
	"marquee/serve"
	"marquee/tracking"
	"marquee/vast"
)

// template is the compiled document of a video or audio ad (compiled at
// its first request and kept with the ad), or nil for an ad of another
// type (a VAST answer leaves it out).
func template(a *delivery.Ad) *vast.Template {
	c := a.Creative
	if c == nil || !marquee.IsLinear(c.Type) {
		return nil
	}
	if t, ok := a.Memo.Load().(*vast.Template); ok {
		return t
	}
	va := vast.Ad{ID: a.ID, Title: a.Title, MediaURL: c.MediaURL, MimeType: c.MimeType, Width: c.Width, Height: c.Height,
		Duration: time.Duration(c.DurationMs) * time.Millisecond, Clickable: c.ClickURL != "", SkipOffset: time.Duration(c.SkipOffsetMs) * time.Millisecond,
		TagURL: c.VASTTagURL, Audio: c.Type == marquee.CreativeAudio}
	if u := c.UniversalAdID; u != nil {
		va.Registry, va.UniversalID = u.Registry, u.Value
	}
	for _, v := range c.Verifications {
		va.Verifications = append(va.Verifications, vast.Verification{Vendor: v.Vendor, URL: v.URL, Parameters: v.Parameters, NotExecutedURL: v.NotExecutedURL})
	}
	t, err := vast.Compile(va)
	if err != nil {
		return nil // never: a creative's fields always encode
	}
	a.Memo.CompareAndSwap(nil, t) // two first requests at once: either's will do
	return t
}

// companionsOf is the companions of choice ch, a video of a roadblock
// campaign — its image and HTML ads — and their compiled creative (nil:
// none). Compiled per request: roadblocks with companions are few.
func companionsOf(plan *delivery.Plan, ch delivery.Choice, origin []byte) ([]*delivery.Ad, *vast.Template) {
	if ch.Campaign.Roadblock == "" {
		return nil, nil
	}
	ads := plan.Companions(ch.Campaign)
	if len(ads) == 0 {
		return nil, nil
	}
	cs := make([]vast.Companion, len(ads))
	for i, a := range ads {
		c := a.Creative
		cs[i] = vast.Companion{ID: a.ID, Width: c.Width, Height: c.Height, HTML: c.HTML, Clickable: c.ClickURL != ""}
		if c.Type == marquee.CreativeImage {
			cs[i].ImageURL, cs[i].MimeType, cs[i].HTML = string(origin)+c.Image, imageType(c.Image), ""
		}
	}
	required := vast.Required("any")
	if ch.Campaign.Roadblock == marquee.RoadblockAllOrNone {
		required = "all"
	}
	t, err := vast.CompileCompanions(required, cs)
	if err != nil {
		return nil, nil // never: a creative's fields always encode
	}
	return ads, t
}

// imageType is the media type of an uploaded image by its path's
// extension (marquee.AssetTypes).
func imageType(path string) string {
	for t, ext := range marquee.AssetTypes {
		if strings.HasSuffix(path, "."+ext) {
			return t
		}
	}
	return "image/png"
}

// handleVAST serves GET /vast?placement=…&…: a VAST 4.2 document of the
// video ads a decision chooses for one slot (the parameters of GET
// /api/v1/decisions), their tracking URLs signed as a decision's; an
// empty <VAST> when nothing fills it (docs/api.md#vast).
func handleVAST(svc *serve.Service, rq requester) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		anyOrigin(ctx) // players read it from the publisher's page
		in := serve.Input{GDPR: -1}
		if err := decisionFromQuery(ctx.QueryArgs(), &in); err != nil {
			return err
		}
		e := rq.edge(ctx, nil)
		// A roadblock's companions ride in the document.
		d, err := svc.Decide(context.Background(), &in, &e, serve.Options{Companions: true, NoBids: true, Check: func() error {
			if !plainHost(ctx.Host()) {
				return marquee.Invalid("invalid request", marquee.Problems{"Host": "must be a host name, with a port or not"})
			}
			return nil
		}})
		if err != nil {
			return asParams(err)
		}
		defer d.Release()
		plan := svc.Engine().Plan()
		chosen := d.Chosen[0]
		var raw [300]byte
		head := rq.appendOrigin(raw[:0], ctx)
		bp := pagePool.Get().(*[]byte)
		out := append((*bp)[:0], vast.Header...)
		seq, pod := 0, len(chosen) > 1
		for _, ch := range chosen {
			t := template(ch.Ad)
			if t == nil {
				continue
			}
			if pod {
				seq++
			}
			var scratch [256]byte
			token, id := d.Sign(scratch[:0], 0, ch)
			fill := func(dst []byte, h byte) []byte {
				if h == vast.ServingID {
					return hex.AppendEncode(dst, id[:])
				}
				return tracking.AppendPath(append(dst, head...), h, token)
			}
			comps, ct := companionsOf(plan, ch, head)
			if ct == nil {
				out = t.Append(out, seq, fill)
				continue
			}
			// A roadblock's companions: each its own signed impression
			// (creativeView) and click.
			tokens := make([][]byte, len(comps))
			for i, a := range comps {
				tokens[i], _ = d.Sign(nil, 0, delivery.Choice{Ad: a, Campaign: ch.Campaign})
			}
			out = t.AppendWith(out, seq, fill, ct, func(dst []byte, i int, h byte) []byte {
				return tracking.AppendPath(append(dst, head...), h, tokens[i])
			})
		}
		out = append(out, vast.Footer+"\n"...)
		ctx.SetContentTypeBytes(contentTypeXML)
		noStore(ctx)
		*bp = ctx.Response.SwapBody(out)
		pagePool.Put(bp)
		return nil
	}
}

// appendOrigin appends the scheme and host the request came to (the head
// of its absolute URLs) to dst.
func appendOrigin(dst []byte, ctx *fasthttp.RequestCtx) []byte {
	dst = append(dst, "http"...)
	if ctx.IsTLS() || string(ctx.Request.Header.Peek("X-Forwarded-Proto")) == "https" {
		dst = append(dst, 's')
	}
	return append(append(dst, "://"...), ctx.Host()...)
}

// plainHost reports whether host holds only a host name's or an
// address's characters (and a port): a URL made of it needs no escaping
// in XML, HTML or JSON.
func plainHost(host []byte) bool {
	for _, c := range host {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == ':', c == '[', c == ']', c == '_':
		default:
			return false
		}
	}
	return len(host) > 0
}
