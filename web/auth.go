package web

import (
	"bytes"
	"crypto/subtle"

	"github.com/valyala/fasthttp"

	"marquee"
)

// requireAdmin returns the middleware of admin routes: a request passes
// only with "Authorization: Bearer <token>" (compared in constant time).
// With insecure (-insecure-admin) every request passes.
func requireAdmin(token string, insecure bool) func(handler) handler {
	if insecure {
		return func(next handler) handler { return next }
	}
	want := []byte(token)
	return func(next handler) handler {
		return func(ctx *fasthttp.RequestCtx) error {
			auth := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
			scheme, got, _ := bytes.Cut(auth, []byte(" "))
			if len(want) == 0 || !bytes.EqualFold(scheme, []byte("Bearer")) ||
				subtle.ConstantTimeCompare(bytes.TrimSpace(got), want) != 1 {
				if len(auth) == 0 {
					return marquee.Errorf(marquee.KindUnauthorized, "missing bearer token: send Authorization: Bearer <admin token>")
				}
				return marquee.Errorf(marquee.KindUnauthorized, "invalid bearer token")
			}
			return next(ctx)
		}
	}
}
