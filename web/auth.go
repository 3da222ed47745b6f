package web

import (
	"bytes"
	"crypto/subtle"

	"github.com/valyala/fasthttp"
)

// requireAdmin lets a request through only with "Authorization: Bearer
// <token>" (compared in constant time), unless the server runs with
// -insecure-admin.
func (s *Server) requireAdmin(next handler) handler {
	if s.cfg.InsecureAdmin {
		return next
	}
	want := []byte(s.cfg.AdminToken)
	return func(ctx *fasthttp.RequestCtx) error {
		auth := ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)
		scheme, token, _ := bytes.Cut(auth, []byte(" "))
		if len(want) == 0 || !bytes.EqualFold(scheme, []byte("Bearer")) ||
			subtle.ConstantTimeCompare(bytes.TrimSpace(token), want) != 1 {
			ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="marquee"`)
			if len(auth) == 0 {
				return errorf(fasthttp.StatusUnauthorized, "missing bearer token: send Authorization: Bearer <admin token>")
			}
			return errorf(fasthttp.StatusUnauthorized, "invalid bearer token")
		}
		return next(ctx)
	}
}
