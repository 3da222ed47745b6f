//go:build !noconsole

// Package console is Marquee's web console: hand-written HTML, CSS and
// JavaScript (no build step) and two vendored libraries (uPlot for charts,
// qrcode-generator for QR codes), embedded in the binary and served at
// /admin/. It is only a client of the public API: every page reads and
// writes through the same routes, scopes and CSRF check as any other
// client. Build with -tags noconsole to leave it out.
//
// Assets are served under fingerprinted names (name.<sha256 prefix>.ext)
// with a year's immutable caching; the page that names them is never
// cached. Every response carries a strict Content-Security-Policy: no
// inline script or style, and no request to another origin.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"

	"marquee"
)

//go:embed assets
var assets embed.FS

// Included reports whether the console is in this build.
const Included = true

// Prefix is where the console is served.
const Prefix = "/admin/"

// CSP is the Content-Security-Policy of every console response: scripts,
// styles and requests of this origin only; images also from data: and
// blob: URLs (the QR code's PNG download); frames of this origin and of
// the creative origin (HTML creatives' previews, served there as they
// serve: web's /f/ frames).
func CSP(creativeOrigin string) string {
	frames := "'self'"
	if creativeOrigin != "" {
		frames += " " + creativeOrigin
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
		"connect-src 'self'; frame-src " + frames + "; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// file is one servable asset.
type file struct {
	body, gz []byte // gz: nil when compressing does not pay
	ctype    string
	etag     string
	cache    string
}

var (
	once  sync.Once
	files map[string]*file // by path under Prefix ("" is the page)
)

// load fingerprints the assets and rewrites the page's references to them.
func load() {
	files = map[string]*file{}
	renames := map[string]string{} // "assets/app.js" → "assets/app.1a2b3c4d.js"
	var page []byte
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		if p == "assets/index.html" {
			page = body
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			return nil
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(p)
		if strings.HasSuffix(p, "LICENSE") {
			ext = ""
		}
		fp := strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:4]) + ext
		renames[p] = fp
		files[fp] = newFile(body, ext, hex.EncodeToString(sum[:8]), "public, max-age=31536000, immutable")
		return nil
	})
	// The ISO 3166-1 codes the API accepts, for the conditions editor.
	codes, _ := json.Marshal(marquee.Countries())
	countries := []byte("window.MARQUEE_COUNTRIES = " + string(codes) + ";\n")
	sum := sha256.Sum256(countries)
	renames["assets/countries.js"] = "assets/countries." + hex.EncodeToString(sum[:4]) + ".js"
	files[renames["assets/countries.js"]] = newFile(countries, ".js", hex.EncodeToString(sum[:8]), "public, max-age=31536000, immutable")
	if err != nil || page == nil {
		panic(fmt.Sprintf("console: embedded assets unreadable (page found: %t): %v", page != nil, err)) // they are compiled in
	}
	for from, to := range renames {
		page = bytes.ReplaceAll(page, []byte(`"`+from+`"`), []byte(`"`+to+`"`))
	}
	sum = sha256.Sum256(page)
	files[""] = newFile(page, ".html", hex.EncodeToString(sum[:8]), "no-cache")
}

func newFile(body []byte, ext, tag, cache string) *file {
	f := &file{body: body, ctype: mime.TypeByExtension(ext), etag: `"` + tag + `"`, cache: cache}
	if f.ctype == "" {
		f.ctype = "text/plain; charset=utf-8"
	}
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	w.Write(body)
	w.Close()
	if b.Len() < len(body)*9/10 {
		f.gz = b.Bytes()
	}
	return f
}

// Handler returns the handler of GET and HEAD /admin and everything under
// /admin/: /admin redirects to /admin/, /admin/ is the console's page,
// /admin/assets/… its fingerprinted assets; anything else is 404.
// creativeOrigin is where HTML creatives' frames are served ("": this
// server's origin): the console frames their previews from there.
func Handler(creativeOrigin string) fasthttp.RequestHandler {
	once.Do(load)
	csp := CSP(creativeOrigin)
	return func(ctx *fasthttp.RequestCtx) { serve(ctx, csp) }
}

func serve(ctx *fasthttp.RequestCtx, csp string) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), interest-cohort=()")
	p := string(ctx.Path())
	if p == strings.TrimSuffix(Prefix, "/") {
		h.Set("Location", Prefix) // relative: behind any proxy
		ctx.SetStatusCode(fasthttp.StatusMovedPermanently)
		return
	}
	f := files[strings.TrimPrefix(p, Prefix)]
	if f == nil || !strings.HasPrefix(p, Prefix) {
		ctx.SetStatusCode(fasthttp.StatusNotFound)
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"error":"no such console page or asset: the console is at ` + Prefix + `"}`)
		return
	}
	h.Set("Cache-Control", f.cache)
	h.Set("ETag", f.etag)
	h.Set("Vary", "Accept-Encoding")
	h.SetContentType(f.ctype)
	if string(ctx.Request.Header.Peek("If-None-Match")) == f.etag {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	if f.gz != nil && bytes.Contains(ctx.Request.Header.Peek("Accept-Encoding"), []byte("gzip")) {
		h.Set("Content-Encoding", "gzip")
		ctx.SetBody(f.gz)
		return
	}
	ctx.SetBody(f.body)
}
