package web

import (
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// route binds a method and a path pattern to a handler. A pattern is a fixed
// path, or one with a "{name}" segment that matches one path segment.
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
	admin := requireAdmin(s.cfg.AdminToken, s.cfg.InsecureAdmin)
	return []route{
		// The ad contract (docs/api.md).
		{"GET", "/api/v1/ad", handleListAds(s.index, s.now)},
		{"POST", "/api/v1/ad", admin(withStore(handleCreate(adResource, s.store, AdStore.CreateAd, s.writer, adCreated)))},
		// Beyond the contract: ads by id (from the cache), admin reads and writes.
		{"GET", "/api/v1/ad/{id}", handleGetAd(s.adCache)},
		{"PUT", "/api/v1/ad/{id}", admin(withStore(handleReplace(adResource, s.store, AdStore.ReplaceAd, s.writer)))},
		{"DELETE", "/api/v1/ad/{id}", admin(withStore(handleDelete(adResource, s.store, AdStore.DeleteAd, s.writer)))},
		{"GET", "/api/v1/ads", admin(withStore(handleAdminListAds(s.store, s.now)))},
		// Reports (admin).
		{"GET", "/api/v1/ad/{id}/stats", admin(withStore(handleStats(adStats(s.store), s.reports)))},
		{"GET", "/api/v1/links/{code}/stats", admin(withStore(handleStats(linkStats(s.links), s.reports)))},
		{"GET", "/api/v1/stats", admin(withStore(handleOverallStats(s.reports)))},
		// Short links: admin, and the redirect (from the cache).
		{"POST", "/api/v1/links", admin(withStore(handleCreate(linkResource, s.links, LinkStore.CreateLink, s.writer, linkCreated)))},
		{"GET", "/api/v1/links", admin(withStore(handleListLinks(s.links)))},
		{"GET", "/api/v1/links/{code}", admin(withStore(handleGetLink(s.links)))},
		{"PUT", "/api/v1/links/{code}", admin(withStore(handleReplace(linkResource, s.links, LinkStore.ReplaceLink, s.writer)))},
		{"DELETE", "/api/v1/links/{code}", admin(withStore(handleDelete(linkResource, s.links, LinkStore.DeleteLink, s.writer)))},
		{"GET", "/r/{code}", handleRedirect(s.linkCache, s.clicks, s.events, s.metrics.clickEventsDropped)},
		// Events: beacons and batches into the collector.
		{"GET", "/e", handleEventGet(s.events)},
		{"POST", "/e", handleEventPost(s.events)},
		// Operations.
		{"GET", "/healthz", handleHealthz()},
		{"GET", "/readyz", handleReadyz(s.store)},
		{"GET", "/metrics", plain(fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})))},
	}
}
