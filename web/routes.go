package web

import (
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// route binds a method and a path pattern to a handler. A pattern is a fixed
// path, or a fixed prefix ending in "/{id}" that matches one more segment.
type route struct {
	method, pattern string
	handler         handler
}

// Route describes a route for documentation checks.
type Route struct{ Method, Pattern string }

// Routes lists every route the server answers.
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range s.routes() {
		out = append(out, Route{r.method, r.pattern})
	}
	return out
}

// routes is the one page that lists every route and its middleware. Every
// route is counted and timed under its pattern (see mux).
func (s *Server) routes() []route {
	admin := s.requireAdmin
	return []route{
		// The ad contract (spec/ads-api.md).
		{"GET", "/api/v1/ad", handleListAds(s.index, s.now)},
		{"POST", "/api/v1/ad", admin(withStore(handleCreateAd(s.ads)))},
		// Beyond the contract: admin reads and writes.
		{"GET", "/api/v1/ad/{id}", withStore(handleGetAd(s.cache))},
		{"PUT", "/api/v1/ad/{id}", admin(withStore(handleReplaceAd(s.ads)))},
		{"DELETE", "/api/v1/ad/{id}", admin(withStore(handleDeleteAd(s.ads)))},
		{"GET", "/api/v1/ads", admin(withStore(handleAdminListAds(s.store, s.now)))},
		// Events: beacons and batches into the collector.
		{"GET", "/e", handleEventGet(s.events)},
		{"POST", "/e", handleEventPost(s.events)},
		// Operations.
		{"GET", "/healthz", handleHealthz()},
		{"GET", "/readyz", handleReadyz(s.store)},
		{"GET", "/metrics", plain(fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})))},
	}
}
