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

// handleReadyz answers 200 once the server listens (the index is loaded
// before), and says whether the store answers. A store outage does not make
// an instance unready: it keeps serving reads from memory, and only writes
// fail (503), so a load balancer should keep sending it traffic.
func handleReadyz(store pinger) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		pctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := store.Ping(pctx); err != nil {
			writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ready", "store": "down", "error": err.Error()})
			return nil
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ready", "store": "up"})
		return nil
	}
}
