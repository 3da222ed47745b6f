package web

import (
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
	"marquee/linkroute"
)

const (
	linkRoutePrefix = "/api/v1/links/"
	redirectPrefix  = "/r/"
	maxReferrer     = 1024 // bytes of a Referer a click event keeps
)

// handleRedirect serves GET /r/{code}: the link of the code on the
// request's host (LinkDomains) from the cache, where it sends this
// visitor (linkroute.Choose: its rules, its A/B split, its url), the
// click counted in memory and sent to the event collector as a click
// event — no store write. It answers the link's redirect, 404 for an
// unknown code or host, 410 for an expired link or one at its click
// limit. HEAD answers the same without counting a click (link checkers
// and previews are not visitors). A click event the collector refuses
// (spool full) is counted in dropped, not a reason to fail the redirect.
func handleRedirect(links *cache.Cache[string, marquee.Link], domains *LinkDomains, geo linkroute.Geo, counter *clicks.Counter, ev *eventLines, dropped prometheus.Counter) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		code := pathParam(ctx, 0)
		if !marquee.CodeShaped(code) {
			return marquee.NoLink(code)
		}
		domain, ok := domains.host(ctx.Host())
		if !ok {
			return marquee.Errorf(marquee.KindNotFound, "no links are served on host %q", ctx.Host())
		}
		// The cache's string key, the one allocation of a redirect.
		var key string
		if domain == "" {
			key = string(code)
		} else {
			var buf [marquee.MaxDomainLen + 1 + marquee.MaxCodeLen]byte
			key = string(append(append(append(buf[:0], domain...), '/'), code...))
		}
		// A link's load has its own timeout (NewLinkCache); a hit needs no
		// context.
		l, err := links.Get(context.Background(), key)
		if err != nil {
			return err
		}
		if !l.ExpiresAt.IsZero() && !ctx.Time().Before(l.ExpiresAt) {
			return marquee.Errorf(marquee.KindGone, "link %q has expired", code)
		}
		to := linkroute.Choice{URL: l.URL, Rule: -1, Dest: -1}
		if len(l.Rules) > 0 || len(l.Destinations) > 0 {
			v := linkroute.Visitor{UA: ctx.UserAgent(), AcceptLanguage: ctx.Request.Header.Peek(fasthttp.HeaderAcceptLanguage),
				IP: ev.addr(ctx), Geo: geo, Query: ctx.QueryArgs(), Now: ctx.Time()}
			to = linkroute.Choose(&l, &v)
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
			*bp = appendClick((*bp)[:0], ev, ctx, &l, to)
			if err := ev.Sink().Append(ctx.ConnID(), *bp, 1); err != nil {
				dropped.Inc()
			}
			linePool.Put(bp)
		}
		ctx.Response.Header.Set(fasthttp.HeaderLocation, to.URL)
		ctx.SetStatusCode(l.Redirect)
		return nil
	}
}

// appendClick appends the click event line of a redirect to l, sent
// where to says: its domain when not the default, and the rule or
// destination that chose the target.
func appendClick(line []byte, ev *eventLines, ctx *fasthttp.RequestCtx, l *marquee.Link, to linkroute.Choice) []byte {
	line = ev.appendHead(line, ctx, ev.Policy().Decide(signal(ctx)).EventLimit())
	line = eventline.AppendPlain(line, "type", "click")
	line = eventline.AppendPlain(line, "redirected", "1") // the server saw this click: webhooks deliver it
	line = eventline.AppendPlain(line, "code", l.Code)    // codes need no escaping
	if l.Domain != "" {
		line = eventline.AppendPlain(line, "domain", l.Domain) // nor do domains
	}
	var num [20]byte
	if l.AdID > 0 {
		line = eventline.AppendPlain(line, "adId", strconv.AppendInt(num[:0], l.AdID, 10))
	}
	if to.Rule >= 0 {
		line = eventline.AppendPlain(line, "rule", strconv.AppendInt(num[:0], int64(to.Rule), 10))
	}
	if to.Dest >= 0 {
		line = eventline.AppendPlain(line, "dest", strconv.AppendInt(num[:0], int64(to.Dest), 10))
	}
	if ref := ev.Policy().Referrer(ctx.Referer()); len(ref) > 0 {
		line = eventline.AppendString(line, "referrer", ref[:min(len(ref), maxReferrer)])
	}
	return eventline.End(line)
}

// linkKey parses the {code} segment of the admin routes, on the domain
// ?domain= names (the default domain without one): the store's key of
// the link (marquee.LinkKey).
func (d *LinkDomains) linkKey(ctx *fasthttp.RequestCtx) (string, error) {
	seg := pathParam(ctx, 0)
	if !marquee.CodeShaped(seg) {
		return "", marquee.NoLink(seg)
	}
	var domain string
	if args := ctx.QueryArgs(); args.Has("domain") {
		var msg string
		if domain, msg = d.Named(string(args.Peek("domain"))); msg != "" {
			return "", marquee.Invalid("invalid query", marquee.Problems{"domain": msg})
		}
	}
	return marquee.LinkKey(domain, string(seg)), nil
}

// parseLink reads a link create or replace body (ParseLinkInput), its
// domain one of d's (check).
func (d *LinkDomains) parseLink(body []byte) (marquee.LinkInput, error) {
	in, err := marquee.ParseLinkInput(body)
	if err != nil {
		return in, err
	}
	return in, d.Check(&in)
}

// handleGetLink serves GET /api/v1/links/{code}?domain=: the link as
// stored, its clicks as of the last flush.
func handleGetLink(store LinkStore, domains *LinkDomains) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		code, err := domains.linkKey(ctx)
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
		f, err := linkFilter(ctx.QueryArgs())
		if err != nil {
			p = marquee.AsError(err).Problems
		}
		offset, limit := pageArgs(ctx.QueryArgs(), p)
		if err := marquee.Invalid("invalid query", p); err != nil {
			return err
		}
		var links []marquee.Link
		var total int
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

// linkFilter reads the q and tag of a links query.
func linkFilter(args *fasthttp.Args) (marquee.LinkFilter, error) {
	p := marquee.Problems{}
	f := marquee.LinkFilter{Query: string(args.Peek("q"))}
	if len(f.Query) > marquee.MaxNameLen*4 {
		p["q"] = fmt.Sprintf("must be at most %d bytes (a title's length)", marquee.MaxNameLen*4)
	}
	if args.Has("tag") {
		var msg string
		if f.Tag, msg = marquee.NormTag(string(args.Peek("tag"))); msg != "" {
			p["tag"] = msg
		}
	}
	return f, marquee.Invalid("invalid query", p)
}

// linkCreated answers a created link: the link, and where to read it.
func linkCreated(l marquee.Link) (location string, body any) {
	if l.Domain != "" {
		return linkRoutePrefix + l.Code + "?domain=" + l.Domain, l
	}
	return linkRoutePrefix + l.Code, l
}
