package loadgen

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// HelloBody returns a JSON object of exactly n bytes ({"hello":"xx…"});
// below 12 bytes, the 12-byte minimum.
func HelloBody(n int) []byte {
	const head, tail = `{"hello":"`, `"}`
	pad := max(0, n-len(head)-len(tail))
	return append(append([]byte(head), bytes.Repeat([]byte("x"), pad)...), tail...)
}

// HelloServer returns the fasthttp hello-world that throughput is reported
// against: the same HTTP stack as Marquee with no logic. With replay nil it
// answers every request with body (application/json), or 204 No Content
// when body is empty; otherwise it answers each request URI with
// replay[uri], and 404 for URIs it does not hold. fasthttp's defaults, no
// Server header.
func HelloServer(body []byte, replay map[string][]byte) *fasthttp.Server {
	ct := []byte("application/json")
	return &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if replay == nil && len(body) == 0 {
				ctx.SetStatusCode(fasthttp.StatusNoContent)
				return
			}
			ctx.SetContentTypeBytes(ct)
			if replay == nil {
				ctx.SetBody(body)
			} else if b, ok := replay[string(ctx.RequestURI())]; ok {
				ctx.SetBody(b)
			} else {
				ctx.SetStatusCode(fasthttp.StatusNotFound)
			}
		},
		NoDefaultServerHeader: true,
		CloseOnShutdown:       true,
	}
}
