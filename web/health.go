package web

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"
)

// handleHealthz answers 200 while the process runs.
func handleHealthz() handler {
	return func(ctx *fasthttp.RequestCtx) error {
		writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ok"})
		return nil
	}
}

// pinger is what readiness needs of the store.
type pinger interface {
	Ping(ctx context.Context) error
}

// handleReadyz answers 200 when the store answers; the index is loaded
// before the server starts listening.
func handleReadyz(store pinger) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		pctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := store.Ping(pctx); err != nil {
			ctx.Response.Header.Set("Retry-After", retryAfter)
			writeJSON(ctx, fasthttp.StatusServiceUnavailable, map[string]string{"status": "store unavailable", "error": err.Error()})
			return nil
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ready"})
		return nil
	}
}
