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

// Hello is what the hello-world answers.
type Hello struct {
	// Body answers every request (application/json); empty: 204 No
	// Content, as an event beacon answers.
	Body []byte
	// Replay, if set, answers each request URI with Replay[uri], and 404
	// for URIs it does not hold.
	Replay map[string][]byte
	// Location, if set, answers every request 302 with this Location and
	// no body: the bytes a short link's redirect sends.
	Location []byte
}

// HelloServer returns the fasthttp hello-world that throughput is reported
// against: the same HTTP stack as Marquee with no logic, answering as h
// says. fasthttp's defaults, no Server header.
func HelloServer(h Hello) *fasthttp.Server {
	ct := []byte("application/json")
	return &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			switch {
			case h.Location != nil:
				ctx.Response.Header.SetBytesV(fasthttp.HeaderLocation, h.Location)
				ctx.SetStatusCode(fasthttp.StatusFound)
			case h.Replay != nil:
				b, ok := h.Replay[string(ctx.RequestURI())]
				if !ok {
					ctx.SetStatusCode(fasthttp.StatusNotFound)
					return
				}
				ctx.SetContentTypeBytes(ct)
				ctx.SetBody(b)
			case len(h.Body) == 0:
				ctx.SetStatusCode(fasthttp.StatusNoContent)
			default:
				ctx.SetContentTypeBytes(ct)
				ctx.SetBody(h.Body)
			}
		},
		NoDefaultServerHeader: true,
		CloseOnShutdown:       true,
	}
}
