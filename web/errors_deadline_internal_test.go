package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestStoreDeadlineIs503: a store call that ran out of the request's time
// answers 503 with Retry-After, not a 500.
func TestStoreDeadlineIs503(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var ctx fasthttp.RequestCtx
	s.writeError(&ctx, fmt.Errorf("list ads: %w", context.DeadlineExceeded))
	if got := ctx.Response.StatusCode(); got != 503 || len(ctx.Response.Header.Peek("Retry-After")) == 0 {
		t.Errorf("a store deadline = %d (Retry-After %q); want 503 with Retry-After", got, ctx.Response.Header.Peek("Retry-After"))
	}
}
