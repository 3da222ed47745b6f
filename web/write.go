package web

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
)

// storeTimeout bounds the store calls of one request, and every load of a
// cache (see bounded).
const storeTimeout = 5 * time.Second

// storeHandler is a handler that calls the store, with a context that
// bounds those calls.
type storeHandler func(sctx context.Context, ctx *fasthttp.RequestCtx) error

// withStore gives h a context that ends after storeTimeout.
func withStore(h storeHandler) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		return h(sctx, ctx)
	}
}

// Syncer makes committed changes visible in this instance's index and
// caches (the changelog feed).
type Syncer interface {
	Sync(ctx context.Context) error
}

// writer makes a client's successful write visible to its next request on
// this instance (read-your-writes): it returns once the feed has applied
// what was committed. The feed is the only writer of the index and the
// caches: it applies every instance's changes in commit order.
type writer struct {
	feed Syncer
	log  *slog.Logger
}

// visible waits, after a successful write (err nil), until the feed has
// applied it, and returns err. The write has succeeded either way: if the
// wait fails (the store went away right after the commit), the feed
// applies it when the store is back.
func (w *writer) visible(ctx context.Context, err error, what string) error {
	if err != nil {
		return err
	}
	if serr := w.feed.Sync(ctx); serr != nil {
		w.log.Warn("written but not yet visible on this instance", "what", what, "err", serr)
	}
	return nil
}

// readJSON checks a body's type and size (see checkJSONBody), then parses
// it with parse.
func readJSON[T any](ctx *fasthttp.RequestCtx, limit int, parse func([]byte) (T, error)) (T, error) {
	if err := checkJSONBody(ctx, limit); err != nil {
		var zero T
		return zero, err
	}
	return parse(ctx.PostBody())
}

// checkJSONBody refuses a body whose declared type is not JSON (415) or
// that is larger than limit bytes (413). A body with no Content-Type is
// read as JSON.
func checkJSONBody(ctx *fasthttp.RequestCtx, limit int) error {
	return checkBody(ctx, limit, func(media []byte) bool {
		return bytes.Equal(media, contentTypeJSON) || bytes.HasSuffix(media, []byte("+json"))
	}, "content type %q is not JSON; send application/json")
}

// checkBody refuses a body whose declared media type (lower-cased, without
// parameters) accepts refuses — 415 with refusal, a format taking the
// Content-Type — or that is larger than limit bytes (413). A body with no
// Content-Type passes.
func checkBody(ctx *fasthttp.RequestCtx, limit int, accepts func(media []byte) bool, refusal string) error {
	if ct := ctx.Request.Header.ContentType(); len(ct) > 0 {
		media, _, _ := bytes.Cut(ct, []byte(";"))
		if !accepts(bytes.ToLower(bytes.TrimSpace(media))) {
			return marquee.Errorf(marquee.KindUnsupportedMedia, refusal, ct)
		}
	}
	if n := len(ctx.PostBody()); n > limit {
		return marquee.Errorf(marquee.KindTooLarge, "request body is %d bytes; the limit is %d", n, limit)
	}
	return nil
}
