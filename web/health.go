package web

import (
	"context"
	"strings"
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
// before), and says whether the store answers, whether a disk is the
// reason writes or events are refused ("store":"full", "events":"disk
// low"), and which event streams' brokers are down or behind
// ("streams":"nats: down"; "events":"stream backlog full" once events
// are refused for it). A store outage does not make an instance unready: it keeps
// serving reads from memory, and only writes fail (503), so a load
// balancer should keep sending it traffic.
func handleReadyz(store pinger, events any) handler {
	state := readiness(store, events)
	return func(ctx *fasthttp.RequestCtx) error {
		writeJSON(ctx, fasthttp.StatusOK, state())
		return nil
	}
}

// readiness returns what /readyz says: the store up, down (with the
// error) or full, and the events' disk when it is low.
func readiness(store pinger, events any) func() map[string]string {
	full := func() bool { return false }
	if f, ok := store.(interface{ Full() bool }); ok {
		full = f.Full
	}
	diskLow := func() bool { return false }
	if d, ok := events.(interface{ DiskLow() bool }); ok {
		diskLow = d.DiskLow
	}
	behind := func() []string { return nil }
	if s, ok := events.(interface{ StreamsBehind() []string }); ok {
		behind = s.StreamsBehind
	}
	return func() map[string]string {
		pctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		body := map[string]string{"status": "ready", "store": "up"}
		if err := store.Ping(pctx); err != nil {
			body["store"], body["error"] = "down", err.Error()
		} else if full() {
			body["store"] = "full"
		}
		if b := behind(); len(b) > 0 {
			body["streams"] = strings.Join(b, "; ")
			if strings.Contains(body["streams"], "backlog full") {
				body["events"] = "stream backlog full"
			}
		}
		if diskLow() {
			body["events"] = "disk low"
		}
		return body
	}
}
