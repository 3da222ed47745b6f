package web

import (
	"bytes"
	"context"
	"crypto/subtle"
	"net/netip"
	"net/url"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/auth"
)

// The gate: who a request is, and whether it may call its route. It
// stands apart from the handlers: routes.go puts each route behind it
// with its scope, and a handler reads who called with principal.

// Pseudo-scopes of routes: public ones need no credential, signed-in
// ones any valid credential.
const (
	public   marquee.Scope = ""
	signedIn marquee.Scope = "signed-in"
)

// SessionCookie is the name of the session cookie.
const SessionCookie = "marquee_session"

// principalKey is the user value a guarded route's principal is kept in.
const principalKey = "marquee.principal"

// guard returns h behind its route's access a: a request passes with a
// credential that holds a's scope (or, for signedIn, any valid
// credential) — an advertiser's or a publisher's account only to a route
// open to it — and h finds who it is with principal. Public routes pass
// as they are.
func (s *Server) guard(a access, h handler) handler {
	scope, open, boundOK := a.scope, a.bound, a.opened
	if scope == public {
		return h
	}
	return func(ctx *fasthttp.RequestCtx) error {
		p, err := s.authenticate(ctx)
		if err != nil {
			return err
		}
		need := scope
		if p.Bounds.Bound() && a.boundScope != "" {
			need = a.boundScope
		}
		if need != signedIn && !p.Scopes.Has(need) {
			return &marquee.Error{Kind: marquee.KindForbidden, Message: "forbidden", Missing: need}
		}
		if p.Bounds.Bound() && (!boundOK || !open.allows(p.Bounds)) {
			return marquee.Errorf(marquee.KindForbidden, "forbidden: not open to an advertiser's or a publisher's account")
		}
		ctx.SetUserValue(principalKey, p)
		return h(ctx)
	}
}

// authenticate tells who a request is: by its bearer token, else by its
// session cookie (whose state-changing requests must pass the CSRF
// check), else no one.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (auth.Principal, error) {
	p, err := s.credential(&ctx.Request.Header)
	if err != nil || s.cfg.InsecureAdmin || len(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)) > 0 {
		return p, err
	}
	if !ctx.IsGet() && !ctx.IsHead() && !ctx.IsOptions() {
		if err := checkCSRF(ctx, p.CSRF); err != nil {
			return p, err
		}
	}
	return p, nil
}

// credential is who a request's headers say it is — its bearer token,
// else its session cookie — without the CSRF check of a cookie's change
// (authenticate adds it): what fasthttp's HeaderReceived may ask before
// the body is read.
func (s *Server) credential(h *fasthttp.RequestHeader) (auth.Principal, error) {
	if s.cfg.InsecureAdmin {
		return auth.Owner("insecure-admin"), nil
	}
	if v := h.Peek(fasthttp.HeaderAuthorization); len(v) > 0 {
		scheme, token, _ := bytes.Cut(v, []byte(" "))
		if !bytes.EqualFold(scheme, []byte("Bearer")) {
			return auth.Principal{}, marquee.Errorf(marquee.KindUnauthorized, "invalid bearer token")
		}
		return s.auth.Bearer(context.Background(), bytes.TrimSpace(token), s.now()) // never the RequestCtx: a load may outlive the request
	}
	cookie := h.Cookie(SessionCookie)
	if len(cookie) == 0 {
		// The message predates keys and sessions; clients match on it.
		return auth.Principal{}, marquee.Errorf(marquee.KindUnauthorized, "missing bearer token: send Authorization: Bearer <admin token>")
	}
	return s.auth.Cookie(context.Background(), cookie, s.now())
}

// checkCSRF refuses a cookie-authenticated change that does not come
// from this origin (Origin, else Referer) or lacks the session's token
// in X-CSRF-Token. Bearer-authenticated requests need neither: a browser
// never adds that header by itself.
func checkCSRF(ctx *fasthttp.RequestCtx, token string) error {
	origin := ctx.Request.Header.Peek("Origin")
	if len(origin) == 0 {
		if ref, err := url.Parse(string(ctx.Request.Header.Referer())); err == nil && ref.Host != "" {
			origin = []byte(ref.Scheme + "://" + ref.Host)
		}
	}
	scheme := "http"
	if ctx.IsTLS() || bytes.Equal(ctx.Request.Header.Peek("X-Forwarded-Proto"), []byte("https")) {
		scheme = "https"
	}
	if string(origin) != scheme+"://"+string(ctx.Host()) {
		return marquee.Errorf(marquee.KindForbidden, "cross-origin request refused: Origin must be %s://%s", scheme, ctx.Host())
	}
	if got := ctx.Request.Header.Peek("X-CSRF-Token"); len(got) == 0 || subtle.ConstantTimeCompare(got, []byte(token)) != 1 {
		return marquee.Errorf(marquee.KindForbidden, "missing or wrong X-CSRF-Token header (GET /api/v1/session gives it)")
	}
	return nil
}

// principal is who a guarded route's request is.
func principal(ctx *fasthttp.RequestCtx) auth.Principal {
	p, _ := ctx.UserValue(principalKey).(auth.Principal)
	return p
}

// requester tells who makes a request: its principal (set by guard) and
// its client's address (through the trusted proxies).
type requester struct {
	trusted []netip.Prefix
	// public is the server's public origin (Config.PublicURL; "": each
	// request's own scheme and host).
	public string
}

// appendOrigin appends the origin absolute URLs are made of: the public
// one when configured (-public-url), else the request's scheme and host
// (which a client chooses: its Host header).
func (r requester) appendOrigin(dst []byte, ctx *fasthttp.RequestCtx) []byte {
	if r.public != "" {
		return append(dst, r.public...)
	}
	return appendOrigin(dst, ctx)
}

// audit returns sctx carrying who makes the request's changes (for the
// audit log the store writes with them): action and the names of the
// fields it changes.
func (r requester) audit(sctx context.Context, ctx *fasthttp.RequestCtx, action string, fields []string) context.Context {
	return marquee.WithAudit(sctx, marquee.Audit{Actor: principal(ctx).Actor, IP: r.ip(ctx), Action: action, Fields: fields})
}

// addr is the client's address.
func (r requester) addr(ctx *fasthttp.RequestCtx) netip.Addr { return clientIP(ctx, r.trusted) }

// ip is the client's address as text.
func (r requester) ip(ctx *fasthttp.RequestCtx) string { return r.addr(ctx).String() }

// metricsGuard puts /metrics behind token when one is set
// (-metrics-token); Prometheus sends it as a bearer token.
func metricsGuard(token string, h handler) handler {
	if token == "" {
		return h
	}
	want := []byte(token)
	return func(ctx *fasthttp.RequestCtx) error {
		scheme, got, _ := bytes.Cut(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization), []byte(" "))
		if !bytes.EqualFold(scheme, []byte("Bearer")) || subtle.ConstantTimeCompare(bytes.TrimSpace(got), want) != 1 {
			return marquee.Errorf(marquee.KindUnauthorized, "missing or wrong metrics token: send Authorization: Bearer <-metrics-token>")
		}
		return h(ctx)
	}
}
