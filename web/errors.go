package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"marquee"
)

// statusOf is the one map from an error's kind to the status a client
// gets. A new kind is one line here.
var statusOf = map[marquee.Kind]int{
	marquee.KindInternal:         fasthttp.StatusInternalServerError,
	marquee.KindInvalid:          fasthttp.StatusBadRequest,
	marquee.KindNotFound:         fasthttp.StatusNotFound,
	marquee.KindConflict:         fasthttp.StatusConflict,
	marquee.KindUnauthorized:     fasthttp.StatusUnauthorized,
	marquee.KindForbidden:        fasthttp.StatusForbidden,
	marquee.KindUnavailable:      fasthttp.StatusServiceUnavailable,
	marquee.KindTooLarge:         fasthttp.StatusRequestEntityTooLarge,
	marquee.KindUnsupportedMedia: fasthttp.StatusUnsupportedMediaType,
	marquee.KindGone:             fasthttp.StatusGone,
	marquee.KindMethodNotAllowed: fasthttp.StatusMethodNotAllowed,
	marquee.KindHeadersTooLarge:  fasthttp.StatusRequestHeaderFieldsTooLarge,
	marquee.KindTooManyRequests:  fasthttp.StatusTooManyRequests,
	marquee.KindTimeout:          fasthttp.StatusRequestTimeout,
	marquee.KindStorageFull:      fasthttp.StatusServiceUnavailable,
}

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error    string           `json:"error"`
	Problems marquee.Problems `json:"problems,omitempty"`
	Missing  marquee.Scope    `json:"missing,omitempty"`
}

// retryAfter is the Retry-After (seconds) sent with a 503.
const retryAfter = "1"

// writeError is the one place that maps an error to a status and a body:
// the status by its kind (statusOf), the body from its client message and
// problems. A store call past its deadline is a 503. Any other error that is not a *marquee.Error is internal: logged with
// the request, and the client reads only "internal error". A cause
// (Error.Err) is logged, never sent. A 503 says "; retry later" and when
// (Retry-After); a 401 names the scheme (WWW-Authenticate).
func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error) {
	e := marquee.AsError(err)
	if e == nil && errors.Is(err, context.DeadlineExceeded) {
		// A store call that ran out of its request's time (storeTimeout):
		// the store is slow or overloaded, not the request wrong.
		e = &marquee.Error{Kind: marquee.KindUnavailable, Message: "the store did not answer in time", Err: err}
	}
	if e == nil || e.Kind == marquee.KindInternal {
		s.log.Error("internal error", "method", string(ctx.Method()), "path", string(ctx.Path()), "err", err)
		e = &marquee.Error{Kind: marquee.KindInternal, Message: "internal error"}
	}
	msg := e.Message
	switch e.Kind {
	case marquee.KindUnavailable, marquee.KindStorageFull:
		if e.Err != nil {
			s.log.Warn(e.Message, "method", string(ctx.Method()), "path", string(ctx.Path()), "err", err)
		}
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, retryAfter)
		if e.RetryAfter > 0 {
			ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, seconds(e.RetryAfter))
		}
		msg += "; retry later"
	case marquee.KindUnauthorized:
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="marquee"`)
	case marquee.KindTooManyRequests:
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, seconds(e.RetryAfter))
	}
	writeJSON(ctx, statusOf[e.Kind], errorBody{Error: msg, Problems: e.Problems, Missing: e.Missing})
}

// isTimeout reports whether err is a read that ran out of time (a client
// slower than the read timeout).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// seconds is d as a Retry-After: whole seconds, rounded up, at least 1.
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64((max(time.Second, d)+time.Second-1)/time.Second), 10)
}

// transportError answers requests fasthttp could not read.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		err = marquee.Errorf(marquee.KindTooLarge, "request body exceeds %d bytes", MaxRequestBody)
	case errors.As(err, new(*fasthttp.ErrSmallBuffer)):
		err = marquee.Errorf(marquee.KindHeadersTooLarge, "request line and headers exceed %d bytes", ReadBufferSize)
	case isTimeout(err):
		err = marquee.Errorf(marquee.KindTimeout, "request timeout: send the whole request within the read timeout")
	default:
		// fasthttp's text quotes the bytes it read, the other headers
		// (a session cookie, a bearer token) with them: never send or
		// log it.
		err = errMalformed
	}
	nosniff(ctx)
	s.writeError(ctx, err)
}

var errMalformed = marquee.Errorf(marquee.KindInvalid, "malformed request: the request line, a header or the body's framing is not valid HTTP/1.1")

var contentTypeJSON = []byte("application/json")

// writeJSON writes v as the JSON body of a response with the given status.
func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	ctx.SetStatusCode(status)
	ctx.SetContentTypeBytes(contentTypeJSON)
	ctx.SetBody(renderJSON(v))
}

// renderJSON marshals v without HTML escaping and without a trailing
// newline.
func renderJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // only our own types reach here; they always marshal
		panic(fmt.Sprintf("marshal %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
