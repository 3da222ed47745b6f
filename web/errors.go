package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"marquee"
)

// apiError is an error with the status code and message a client sees.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error    string           `json:"error"`
	Problems marquee.Problems `json:"problems,omitempty"`
}

// retryAfter is the Retry-After (seconds) sent with a 503.
const retryAfter = "1"

// writeError is the one place that maps an error to a status and a body.
// Errors it does not know are logged and reach the client as a generic 500.
func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error) {
	var (
		api     *apiError
		invalid *marquee.InvalidError
		body    errorBody
		status  int
	)
	switch {
	case errors.As(err, &invalid):
		status, body = fasthttp.StatusBadRequest, errorBody{Error: invalid.What, Problems: invalid.Problems}
	case errors.As(err, &api):
		status, body = api.status, errorBody{Error: api.msg}
	case errors.Is(err, marquee.ErrNotFound):
		status, body = fasthttp.StatusNotFound, errorBody{Error: "not found"}
	case errors.Is(err, marquee.ErrConflict):
		status, body = fasthttp.StatusConflict, errorBody{Error: strings.TrimSuffix(err.Error(), ": "+marquee.ErrConflict.Error())}
	case errors.Is(err, marquee.ErrOverloaded):
		status, body = fasthttp.StatusServiceUnavailable, errorBody{Error: err.Error() + "; retry later"}
		ctx.Response.Header.Set("Retry-After", retryAfter)
	case errors.Is(err, marquee.ErrUnavailable):
		s.log.Warn("store unavailable", "method", string(ctx.Method()), "path", string(ctx.Path()), "err", err)
		status, body = fasthttp.StatusServiceUnavailable, errorBody{Error: "store unavailable; retry later"}
		ctx.Response.Header.Set("Retry-After", retryAfter)
	default:
		s.log.Error("internal error", "method", string(ctx.Method()), "path", string(ctx.Path()), "err", err)
		status, body = fasthttp.StatusInternalServerError, errorBody{Error: "internal error"}
	}
	writeJSON(ctx, status, body)
}

// transportError answers requests fasthttp could not read.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		writeJSON(ctx, fasthttp.StatusRequestEntityTooLarge, errorBody{Error: fmt.Sprintf("request body exceeds %d bytes", MaxRequestBody)})
	case errors.As(err, new(*fasthttp.ErrSmallBuffer)):
		writeJSON(ctx, fasthttp.StatusRequestHeaderFieldsTooLarge, errorBody{Error: fmt.Sprintf("request line and headers exceed %d bytes", ReadBufferSize)})
	default:
		writeJSON(ctx, fasthttp.StatusBadRequest, errorBody{Error: "malformed request: " + err.Error()})
	}
}

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
