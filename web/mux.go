package web

import (
	"bytes"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
)

// handler serves a request; a returned error is written by writeError.
type handler func(ctx *fasthttp.RequestCtx) error

// plain adapts a fasthttp handler that writes its own errors.
func plain(h fasthttp.RequestHandler) handler {
	return func(ctx *fasthttp.RequestCtx) error { h(ctx); return nil }
}

// mux dispatches by path and method. It is built once and read-only after.
type mux struct {
	static map[string]*endpoint // fixed paths
	prefix []*endpoint          // ".../{name}" patterns, matched by prefix
	srv    *Server
	// creativeHost is -creative-origin's host (and port), lower case:
	// requests to it are for frames and tracking URLs only, and frames
	// are served nowhere else ("": none, frames on any host).
	creativeHost []byte
}

// endpoint is every route that shares one pattern.
type endpoint struct {
	pattern string
	// For ".../{name}..." patterns: what comes before the first "{", and
	// the rest of the pattern from there (see matchTail).
	prefix, tail string
	methods      map[string]*bound
	allow        string // the Allow header of a 405
}

// bound is one route with its metrics.
type bound struct {
	h     handler
	stats *routeStats
}

func newMux(s *Server, routes []route) *mux {
	m := &mux{static: map[string]*endpoint{}, srv: s}
	if u, err := url.Parse(s.cfg.CreativeOrigin); err == nil && u.Host != "" {
		m.creativeHost = []byte(strings.ToLower(u.Host))
	}
	byPattern := map[string]*endpoint{}
	for _, r := range routes {
		ep := byPattern[r.pattern]
		if ep == nil {
			ep = &endpoint{pattern: r.pattern, methods: map[string]*bound{}}
			byPattern[r.pattern] = ep
			if n := strings.Count(r.pattern, "{"); n > maxParams {
				panic(fmt.Sprintf("web: route %s has %d {name}s; the mux captures at most %d", r.pattern, n, maxParams))
			}
			if i := strings.IndexByte(r.pattern, '{'); i >= 0 {
				ep.prefix, ep.tail = r.pattern[:i], r.pattern[i:]
				m.prefix = append(m.prefix, ep)
			} else {
				m.static[r.pattern] = ep
			}
		}
		ep.methods[r.method] = &bound{h: s.guard(r.access, r.handler), stats: s.metrics.route(r.method, r.pattern)}
	}
	for _, ep := range byPattern {
		var allow []string
		for method := range ep.methods {
			allow = append(allow, method)
			if method == fasthttp.MethodGet {
				allow = append(allow, fasthttp.MethodHead)
			}
		}
		sort.Strings(allow)
		ep.allow = strings.Join(allow, ", ")
	}
	return m
}

// matchPrefix returns the endpoint of a path that no fixed route has, with
// the segments its pattern's "{name}"s matched in p.
func (m *mux) matchPrefix(path []byte, p *params) *endpoint {
	for _, ep := range m.prefix {
		if rest, ok := bytes.CutPrefix(path, []byte(ep.prefix)); ok && matchTail(ep.tail, rest, p) {
			return ep
		}
	}
	return nil
}

// params are the path segments a route's "{name}"s matched, in order:
// captured by the mux as it finds the route, so that a handler reads them
// (pathParam) rather than cutting the path again. They alias the request's
// path: valid while the handler runs.
type params struct {
	n   int
	seg [maxParams][]byte
}

// maxParams bounds the "{name}"s of a pattern.
const maxParams = 3

// paramsKey is the request's user value that holds its params.
const paramsKey = "marquee.params"

var paramsPool = sync.Pool{New: func() any { return new(params) }}

// pathParam is the i-th segment the request's route captured ("" when it has
// none).
func pathParam(ctx *fasthttp.RequestCtx, i int) []byte {
	if p, ok := ctx.UserValue(paramsKey).(*params); ok && i < p.n {
		return p.seg[i]
	}
	return nil
}

// matchTail reports whether path matches tail, a pattern from its first
// "{": "{name}" matches one non-empty path segment, "{name...}" (at the
// end) the rest of the path, empty or not, and anything else itself; the
// segments matched go to p. It allocates nothing.
func matchTail(tail string, path []byte, p *params) bool {
	p.n = 0
	for tail != "" {
		if tail[0] != '{' { // a literal part, up to the next name
			n := strings.IndexByte(tail, '{')
			if n < 0 {
				n = len(tail)
			}
			if len(path) < n || string(path[:n]) != tail[:n] {
				return false
			}
			tail, path = tail[n:], path[n:]
			continue
		}
		end := strings.IndexByte(tail, '}')
		if strings.HasSuffix(tail[:end], "...") {
			p.add(path)
			return true
		}
		seg := bytes.IndexByte(path, '/')
		if seg < 0 {
			seg = len(path)
		}
		if seg == 0 {
			return false
		}
		p.add(path[:seg])
		tail, path = tail[end+1:], path[seg:]
	}
	return len(path) == 0
}

func (p *params) add(seg []byte) {
	if p.n < maxParams {
		p.seg[p.n] = seg
		p.n++
	}
}

func (m *mux) serve(ctx *fasthttp.RequestCtx) {
	start := ctx.Time() // set by fasthttp just before calling the handler
	nosniff(ctx)
	path := ctx.Path()
	if m.creativeHost != nil && !m.creativeRoute(ctx, path) {
		m.srv.metrics.unrouted.Inc()
		return
	}
	if ep := m.static[string(path)]; ep != nil { // no allocation: map lookup by converted key
		m.call(ctx, ep, start)
		return
	}
	// Only a route with "{name}"s has segments to capture.
	p := paramsPool.Get().(*params)
	ep := m.matchPrefix(path, p)
	if ep == nil {
		// The path as sent, for a route whose last segment takes the rest
		// ("{userKey...}"): fasthttp folds "." and ".." segments out of the
		// path it normalises, and a rest may be such a key (an erasure of
		// the user key "..": DELETE /api/v1/privacy/subjects/..).
		raw, _, _ := bytes.Cut(ctx.Request.Header.RequestURI(), []byte("?"))
		*p = params{}
		if ep = m.matchPrefix(raw, p); ep != nil && !strings.HasSuffix(ep.pattern, "...}") {
			ep = nil
		}
	}
	if ep != nil && p.n > 0 {
		// Not removed after the handler: fasthttp resets user values
		// with the request, and only a route with params (which sets its
		// own) reads it.
		ctx.SetUserValue(paramsKey, p)
	}
	m.call(ctx, ep, start)
	*p = params{}
	paramsPool.Put(p)
}

// creativeRoute keeps the creative origin's host and the ad server's
// apart: on the creative host only frames (/f/) and tracking URLs (/t/)
// are served; elsewhere no frame is. It answers 404 itself and says false
// for a request on the wrong side.
func (m *mux) creativeRoute(ctx *fasthttp.RequestCtx, path []byte) bool {
	onCreative := bytes.EqualFold(ctx.Host(), m.creativeHost)
	frame := bytes.HasPrefix(path, []byte(FramePrefix))
	switch {
	case onCreative && !frame && !bytes.HasPrefix(path, []byte("/t/")):
		m.srv.writeError(ctx, marquee.Errorf(marquee.KindNotFound, "this host serves creatives only (-creative-origin)"))
		return false
	case !onCreative && frame:
		m.srv.writeError(ctx, marquee.Errorf(marquee.KindNotFound, "creatives are served on their own origin (-creative-origin), not on this host"))
		return false
	}
	return true
}

// call runs the route of ep for the request's method, or answers 404 (no
// endpoint) or 405.
func (m *mux) call(ctx *fasthttp.RequestCtx, ep *endpoint, start time.Time) {
	if ep == nil {
		m.srv.writeError(ctx, marquee.Errorf(marquee.KindNotFound, "no route for %q", ctx.Path()))
		m.srv.metrics.unrouted.Inc()
		return
	}
	method := ctx.Method()
	if ctx.IsHead() {
		method = []byte(fasthttp.MethodGet)
	}
	b := ep.methods[string(method)]
	if b == nil {
		ctx.Response.Header.Set("Allow", ep.allow)
		m.srv.writeError(ctx, marquee.Errorf(marquee.KindMethodNotAllowed, "method %s not allowed on %s; allowed: %s", ctx.Method(), ep.pattern, ep.allow))
		m.srv.metrics.unrouted.Inc()
		return
	}
	if err := b.h(ctx); err != nil {
		m.srv.writeError(ctx, err)
	}
	b.stats.observe(ctx.Response.StatusCode(), time.Since(start))
}

var (
	headerNosniff = []byte("X-Content-Type-Options")
	valueNosniff  = []byte("nosniff")
)

// nosniff tells browsers to take every answer as the type it declares
// (a JSON error that quotes a path is never run as a page).
func nosniff(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetCanonical(headerNosniff, valueNosniff)
}

var (
	headerAllowOrigin  = []byte(fasthttp.HeaderAccessControlAllowOrigin)
	headerCacheControl = []byte(fasthttp.HeaderCacheControl)
	valueAny           = []byte("*")
	valueNoStore       = []byte("no-store")
	contentTypeXML     = []byte("application/xml; charset=utf-8")
)

// anyOrigin lets a page of any origin read the answer (CORS): for the
// public routes a publisher's page or a player calls, which answer
// nothing of a credential's.
func anyOrigin(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetCanonical(headerAllowOrigin, valueAny)
}

// noStore keeps every cache from keeping the answer (one per request).
func noStore(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetCanonical(headerCacheControl, valueNoStore)
}
