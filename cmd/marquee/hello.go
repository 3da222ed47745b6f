package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/valyala/fasthttp"

	"marquee/loadgen"
)

// runHello serves a fixed JSON body of -size bytes on every path: the
// same-stack ceiling that throughput figures are reported against. With
// -capture and -paths it first fetches, for every path, the body a running
// server returns, then answers each path with that body: a server that
// sends exactly the same bytes with no logic at all. With -location it
// answers a redirect, as GET /r/{code} does.
func runHello(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("hello", "hello [flags]", "Serves a fixed answer on every path with the same HTTP stack as serve: the baseline that throughput is reported against.", stderr)
	addr := fs.String("addr", ":8081", "listen address")
	size := fs.Int("size", 13, "response body size in bytes (0: answer 204 No Content)")
	capture := fs.String("capture", "", "base URL of a server whose responses to -paths to replay")
	paths := fs.String("paths", "", "file of paths, one a line (with -capture)")
	location := fs.String("location", "", "answer 302 with this Location and no body (a short link's redirect)")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if (*capture == "") != (*paths == "") {
		return fmt.Errorf("-capture and -paths go together")
	}
	if *size < 0 || *size > 64<<20 {
		return fmt.Errorf("-size %d: want 0 (204 No Content) to 64 MiB", *size)
	}
	var body []byte // -size 0: 204 No Content, as an event beacon answers
	if *size > 0 {
		body = loadgen.HelloBody(*size)
	}
	var replay map[string][]byte
	if *capture != "" {
		var err error
		if replay, err = captureBodies(*capture, *paths); err != nil {
			return err
		}
	}
	h := loadgen.Hello{Body: body, Replay: replay}
	if *location != "" {
		h.Location = []byte(*location)
	}
	hs := loadgen.HelloServer(h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	jsonLog(stderr).Info("hello listening", "addr", ln.Addr().String(), "size", *size)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
		return err
	case <-ctx.Done():
		return hs.Shutdown()
	}
}

// captureBodies fetches base+path for every path in the file.
func captureBodies(base, pathsFile string) (map[string][]byte, error) {
	raw, err := os.ReadFile(pathsFile)
	if err != nil {
		return nil, err
	}
	bodies := map[string][]byte{}
	for _, p := range strings.Fields(string(raw)) {
		status, b, err := fasthttp.Get(nil, base+p)
		if err != nil || status != fasthttp.StatusOK {
			return nil, fmt.Errorf("capture %s: status %d, %v", p, status, err)
		}
		bodies[p] = b
	}
	return bodies, nil
}
