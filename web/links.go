package web

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/cache"
	"marquee/clicks"
	"marquee/eventline"
)

const (
	linkRoutePrefix = "/api/v1/links/"
	redirectPrefix  = "/r/"
	maxReferrer     = 1024 // bytes of a Referer a click event keeps
)

// handleRedirect serves GET /r/{code}: the link from the cache, the click
// counted in memory and sent to the event collector as a click event — no
// store write. It answers the link's redirect, 404 for an unknown code,
// 410 for an expired link or one at its click limit. HEAD answers the
// same without counting a click (link checkers and previews are not
// visitors). A click event the collector refuses (spool full) is counted
// in dropped, not a reason to fail the redirect.
func handleRedirect(links *cache.Cache[string, marquee.Link], counter *clicks.Counter, ev *eventEnv, dropped prometheus.Counter) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		code := ctx.Path()[len(redirectPrefix):]
		if !marquee.CodeShaped(code) {
			return marquee.NoLink(code)
		}
		// A link's load has its own timeout (NewLinkCache); a hit needs no
		// context.
		l, err := links.Get(context.Background(), string(code))
		if err != nil {
			return err
		}
		if !l.ExpiresAt.IsZero() && !ctx.Time().Before(l.ExpiresAt) {
			return marquee.Errorf(marquee.KindGone, "link %q has expired", code)
		}
		if ctx.IsHead() {
			if counter.Reached(&l) {
				return marquee.Errorf(marquee.KindGone, "link %q has reached its maximum number of clicks", code)
			}
		} else {
			if !counter.Take(&l) {
				return marquee.Errorf(marquee.KindGone, "link %q has reached its maximum number of clicks", code)
			}
			bp := linePool.Get().(*[]byte)
			*bp = appendClick((*bp)[:0], ev, ctx, &l)
			if err := ev.sink.Append(ctx.ConnID(), *bp, 1); err != nil {
				dropped.Inc()
			}
			linePool.Put(bp)
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, l.URL)
		ctx.SetStatusCode(l.Redirect)
		return nil
	}
}

// appendClick appends the click event line of a redirect to l.
func appendClick(line []byte, ev *eventEnv, ctx *fasthttp.RequestCtx, l *marquee.Link) []byte {
	line = ev.appendHead(line, ctx)
	line = eventline.AppendPlain(line, "type", "click")
	line = eventline.AppendPlain(line, "code", l.Code) // codes need no escaping
	if l.AdID > 0 {
		var id [20]byte
		line = eventline.AppendPlain(line, "adId", strconv.AppendInt(id[:0], l.AdID, 10))
	}
	if ref := ctx.Referer(); len(ref) > 0 {
		line = eventline.AppendString(line, "referrer", ref[:min(len(ref), maxReferrer)])
	}
	return eventline.End(line)
}

// linkCode parses the {code} segment of the admin routes.
func linkCode(ctx *fasthttp.RequestCtx) (string, error) {
	seg := bytes.TrimPrefix(ctx.Path(), []byte(linkRoutePrefix))
	if !marquee.CodeShaped(seg) {
		return "", marquee.NoLink(seg)
	}
	return string(seg), nil
}

// handleGetLink serves GET /api/v1/links/{code}: the link as stored, its
// clicks as of the last flush.
func handleGetLink(store LinkStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		code, err := linkCode(ctx)
		if err != nil {
			return err
		}
		l, err := store.Link(sctx, code)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, l)
		return nil
	}
}

// createLink is LinkStore.CreateLink for a link created at now(): one
// that would be expired at once is refused (LinkInput.CheckNew).
func createLink(now func() time.Time) func(LinkStore, context.Context, marquee.LinkInput) (marquee.Link, error) {
	return func(st LinkStore, ctx context.Context, in marquee.LinkInput) (marquee.Link, error) {
		if err := in.CheckNew(now()); err != nil {
			return marquee.Link{}, err
		}
		return st.CreateLink(ctx, in)
	}
}

// handleListLinks serves GET /api/v1/links?offset=&limit=: newest first;
// with q, the links whose codes start with it or whose titles hold it,
// by code; with tag, those carrying it.
func handleListLinks(store LinkStore) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		p := marquee.Problems{}
		args := ctx.QueryArgs()
		f := marquee.LinkFilter{Query: string(args.Peek("q"))}
		if len(f.Query) > marquee.MaxTitleLen*4 {
			p["q"] = fmt.Sprintf("must be at most %d bytes (a title's length)", marquee.MaxTitleLen*4)
		}
		if args.Has("tag") {
			var msg string
			if f.Tag, msg = marquee.NormTag(string(args.Peek("tag"))); msg != "" {
				p["tag"] = msg
			}
		}
		offset, limit := pageArgs(args, p)
		if err := marquee.Invalid("invalid query", p); err != nil {
			return err
		}
		var links []marquee.Link
		var total int
		var err error
		if f == (marquee.LinkFilter{}) {
			links, total, err = store.ListLinks(sctx, offset, limit)
		} else {
			links, total, err = store.SearchLinks(sctx, f, offset, limit)
		}
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, newAdminPage(links, total, offset, limit, f != (marquee.LinkFilter{})))
		return nil
	}
}

// linkCreated answers a created link: the link, and where to read it.
func linkCreated(l marquee.Link) (location string, body any) { return linkRoutePrefix + l.Code, l }
