// The tracking pixel and redirect: GET /t/{kind}/{token}, counted once
// per decision and kind by serve.Service.Track.

package web

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"marquee/serve"
	"marquee/tracking"
)

// handleTracking serves GET /t/{kind}/{token}: a signed tracking URL
// (package tracking). An impression or view answers a 1×1 GIF (or 204)
// and records the event; a click records it and redirects to the
// creative's click URL with its macros filled. A token that is not ours
// is a 400, an expired one a 410, and neither is counted; the same URL
// fired again counts once on this instance (within the URL's life).
func handleTracking(svc *serve.Service, rq requester) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		kind, token, ok := tracking.ParsePath(ctx.Path())
		if !ok {
			return tracking.ErrBadToken
		}
		var origin []byte // only a click's target names the conversion URL: no other kind makes it
		if kind == tracking.Click {
			origin = make([]byte, 0, 128)
		}
		e := rq.edge(ctx, origin)
		q := ctx.QueryArgs()
		hit := serve.Hit{Kind: kind, Token: token, Head: ctx.IsHead(), Measured: bytes.Equal(q.Peek("m"), []byte("1")), Proof: q.Peek("rp")}
		if kind == tracking.Error {
			hit.Code = q.Peek("code")
		}
		target, err := svc.Track(ctx, &hit, &e)
		if err != nil {
			return err
		}
		if target != "" {
			ctx.Response.Header.Set(fasthttp.HeaderLocation, target)
			ctx.SetStatusCode(fasthttp.StatusFound)
			return nil
		}
		answerPixel(ctx)
		return nil
	}
}

// ProofPrefix starts the path of a decision's render proof: /p/{token}.
const ProofPrefix = "/p/"

// handleRenderProof serves GET /p/{token}: the render proof of the
// token's decision as text (docs/ivt.md#render-proofs), readable from any
// page, never stored.
func handleRenderProof(svc *serve.Service) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		proof, err := svc.RenderProof(make([]byte, 0, 24), pathParam(ctx, 0))
		if err != nil {
			return err
		}
		anyOrigin(ctx)
		noStore(ctx)
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBody(proof)
		return nil
	}
}

// answerPixel answers a pixel: a 1×1 GIF to a request that accepts only
// images, else 204; never stored.
func answerPixel(ctx *fasthttp.RequestCtx) {
	noStore(ctx)
	if acceptsOnlyImages(ctx.Request.Header.Peek(fasthttp.HeaderAccept)) {
		ctx.SetContentType("image/gif")
		ctx.SetBody(gif1x1)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
