package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/valyala/fasthttp"
)

// runHello serves a fixed JSON body of -size bytes on every path: the
// same-stack ceiling that throughput figures are reported against.
func runHello(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hello", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8081", "listen address")
	size := fs.Int("size", 13, "response body size in bytes")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	body := helloBody(*size)
	ct := []byte("application/json")
	hs := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentTypeBytes(ct)
			ctx.SetBody(body)
		},
		NoDefaultServerHeader: true,
		CloseOnShutdown:       true,
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	slog.New(slog.NewJSONHandler(stderr, nil)).Info("hello listening", "addr", ln.Addr().String(), "size", *size)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
		return err
	case <-ctx.Done():
		return hs.Shutdown()
	}
}

// helloBody returns a JSON object of exactly n bytes (n ≥ 13).
func helloBody(n int) []byte {
	const head, tail = `{"hello":"`, `"}`
	pad := max(0, n-len(head)-len(tail))
	return append(append([]byte(head), bytes.Repeat([]byte("x"), pad)...), tail...)
}
