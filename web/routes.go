package web

import (
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"marquee"
)

// route binds a method and a path pattern to a handler, behind a scope:
// public routes have none, signedIn ones need any valid credential, the
// others a credential that holds the scope (see guard). A pattern is a
// fixed path, or one with "{name}" segments that each match one path
// segment, possibly ending in "{name...}" that matches the rest of the
// path.
type route struct {
	method, pattern string
	scope           marquee.Scope
	handler         handler
}

// Route describes a route for documentation and access checks.
type Route struct {
	Method, Pattern string
	Scope           marquee.Scope // "" public; "signed-in" any valid credential
}

// Routes lists every route the server answers.
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range s.routes() {
		out = append(out, Route{r.method, r.pattern, r.scope})
	}
	return out
}

// routes is the one page that lists every route, its scope and its
// middleware. Every route is counted and timed under its pattern, and
// guarded by its scope (see mux).
func (s *Server) routes() []route {
	return append(s.apiRoutes(), s.consoleRoutes()...)
}

// consoleRoutes serve the console (package console), when the build has
// one: a client of the routes below, public as any web page (what it shows
// comes from the API, with the viewer's credential).
func (s *Server) consoleRoutes() []route {
	if s.console == nil {
		return nil
	}
	return []route{
		{"GET", "/", public, plain(toConsole)},
		{"GET", "/admin", public, plain(s.console)},
		{"GET", "/admin/{asset...}", public, plain(s.console)},
	}
}

// toConsole sends a browser that opens the server's root to the console.
func toConsole(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Location", "/admin/")
	ctx.SetStatusCode(fasthttp.StatusFound)
}

// boundRoutes are the routes an advertiser's or a publisher's account
// (a credential bound to advertisers or sites) may call, and whose: each
// answers only what is the account's (owned, boundList, the report's
// filters). Every other guarded route answers such an account 403.
func (s *Server) boundRoutes() map[string]boundKind {
	return map[string]boundKind{
		"GET /api/v1/session": anyBound, "DELETE /api/v1/session": anyBound, "PUT /api/v1/session/password": anyBound,
		"GET /api/v1/reports": anyBound,
		// Saved reports: those saved in the account's world.
		"POST /api/v1/saved-reports": anyBound, "GET /api/v1/saved-reports": anyBound, "GET /api/v1/saved-reports/{id}": anyBound,
		"PUT /api/v1/saved-reports/{id}": anyBound, "DELETE /api/v1/saved-reports/{id}": anyBound,
		"GET /api/v1/saved-reports/{id}/deliveries": anyBound, "POST /api/v1/saved-reports/{id}/send": anyBound,
		// An advertiser's campaigns, their ads and reports.
		"GET /api/v1/advertisers": advertiserBound, "GET /api/v1/advertisers/{id}": advertiserBound,
		"GET /api/v1/advertisers/{id}/stats": advertiserBound,
		"GET /api/v1/campaigns":              advertiserBound, "GET /api/v1/campaigns/{id}": advertiserBound,
		"GET /api/v1/campaigns/{id}/stats": advertiserBound, "GET /api/v1/campaigns/{id}/delivery": advertiserBound,
		"POST /api/v1/campaigns/{id}/submit": advertiserBound, // its own, for approval
		"GET /api/v1/ads":                    advertiserBound, "GET /api/v1/ad/{id}/stats": advertiserBound,
		// Its creatives, in its campaigns, waiting for approval.
		"POST /api/v1/ad": advertiserBound, "PUT /api/v1/ad/{id}": advertiserBound, "DELETE /api/v1/ad/{id}": advertiserBound,
		"POST /api/v1/ad/{id}/pause": advertiserBound, "POST /api/v1/ad/{id}/resume": advertiserBound,
		"POST /api/v1/conversions": advertiserBound, // its own advertisers' (convert)
		// A publisher's placements and their reports.
		"GET /api/v1/placements": publisherBound, "GET /api/v1/placements/{name}": publisherBound,
		"GET /api/v1/placements/{name}/stats": publisherBound,
	}
}

func (s *Server) apiRoutes() []route {
	// Ads and campaigns whose targeting reads below the country need GeoIP.
	adResource := adResource.checked(func(in *marquee.AdInput) marquee.Problems { return geoRules(s.geo != nil, in.Targeting) })
	campaignRules := func(in *marquee.CampaignInput) marquee.Problems {
		return merge(geoRules(s.geo != nil, in.Targeting), moneyRules(s.serve.Currency(), in.Price, in.Budget))
	}
	campaignResource := campaignResource.checked(campaignRules)
	advertiserResource := advertiserResource.checked(func(in *marquee.AdvertiserInput) marquee.Problems {
		return moneyRules(s.serve.Currency(), nil, in.Budget)
	})
	erase := handleEraseSubject(s.privSt, s.forget, s.events.privacy, s.retention, s.writer, s.now)
	hooksOn := func(h storeHandler) storeHandler { return webhooksOn(s.hookSt, s.hooks, h) }
	return []route{
		// The ad contract (docs/api.md).
		{"GET", "/api/v1/ad", public, handleListAds(s.index, s.now)},
		{"POST", "/api/v1/ad", marquee.ScopeAdsWrite, withStore(s.req.audited(byBounds(handleCreate(adResource, s.store, AdStore.CreateAd, s.writer, adCreated),
			handleAdByAdvertiser(adResource, s.store, s.campaigns, s.writer, false))))},
		// Beyond the contract: ads by id (from the cache), admin reads and writes.
		{"GET", "/api/v1/ad/{id}", public, handleGetAd(s.adCache)},
		{"PUT", "/api/v1/ad/{id}", marquee.ScopeAdsWrite, withStore(s.req.audited(byBounds(handleReplace(adResource, s.store, AdStore.ReplaceAd, adInput, s.writer),
			owned(ownAd(s.store, s.campaigns), handleAdByAdvertiser(adResource, s.store, s.campaigns, s.writer, true)))))},
		{"DELETE", "/api/v1/ad/{id}", marquee.ScopeAdsWrite, withStore(s.req.audited(owned(ownAd(s.store, s.campaigns), handleDelete(adResource, s.store, AdStore.DeleteAd, s.writer))))},
		{"POST", "/api/v1/ad/{id}/pause", marquee.ScopeAdsWrite, withStore(s.req.auditedAs("pause", owned(ownAd(s.store, s.campaigns), handleMove("ad", adID, s.store, AdStore.MoveAd, marquee.ActionPause, s.writer))))},
		{"POST", "/api/v1/ad/{id}/resume", marquee.ScopeAdsWrite, withStore(s.req.auditedAs("resume", owned(ownAd(s.store, s.campaigns), handleMove("ad", adID, s.store, AdStore.MoveAd, marquee.ActionResume, s.writer))))},
		{"POST", "/api/v1/ad/{id}/approve", marquee.ScopeCampaignsApprove, withStore(s.req.auditedAs("approve", handleMove("ad", adID, s.store, AdStore.MoveAd, marquee.ActionApprove, s.writer)))},
		{"POST", "/api/v1/ad/{id}/reject", marquee.ScopeCampaignsApprove, withStore(s.req.auditedAs("reject", handleMove("ad", adID, s.store, AdStore.MoveAd, marquee.ActionReject, s.writer)))},
		{"GET", "/api/v1/ads", marquee.ScopeAdsRead, withStore(handleAdminListAds(s.store, s.campaigns, s.now))},
		// Reports.
		{"GET", "/api/v1/ad/{id}/stats", marquee.ScopeReportsRead, withStore(owned(ownAd(s.store, s.campaigns), handleStats(adStats(s.store), s.reports)))},
		{"GET", "/api/v1/links/{code}/stats", marquee.ScopeReportsRead, withStore(handleStats(linkStats(s.links, &s.cfg.LinkDomains), s.reports))},
		{"GET", "/api/v1/stats", marquee.ScopeReportsRead, withStore(handleOverallStats(s.reports, s.campaigns))},
		{"GET", "/api/v1/advertisers/{id}/stats", marquee.ScopeReportsRead, withStore(owned(ownAdvertiser, handleStats(advertiserStats(s.campaigns, s.reports), s.reports)))},
		{"GET", "/api/v1/campaigns/{id}/delivery", marquee.ScopeCampaignsRead, withStore(owned(ownCampaign(s.campaigns), handleCampaignDelivery(s.campaigns, s.serve.Engine(), s.now)))},
		{"GET", "/api/v1/campaigns/{id}/stats", marquee.ScopeReportsRead, withStore(owned(ownCampaign(s.campaigns), handleStats(campaignStats(s.campaigns, s.reports), s.reports)))},
		{"GET", "/api/v1/placements/{name}/stats", marquee.ScopeReportsRead, withStore(owned(ownPlacement(s.campaigns), handleStats(placementStats(s.campaigns), s.reports)))},
		{"GET", "/api/v1/bidders/stats", marquee.ScopeReportsRead, withStore(handleBidStats(s.bidSt, s.reports, s.serve.Engine()))},
		{"GET", "/api/v1/reports", marquee.ScopeReportsRead, withStore(handleMultiReport(s.multi))},
		{"POST", "/api/v1/saved-reports", marquee.ScopeReportsRead, withStore(handleCreateSavedReport(s.saved, s.multi))},
		{"GET", "/api/v1/saved-reports", marquee.ScopeReportsRead, withStore(handleListSavedReports(s.saved))},
		{"GET", "/api/v1/saved-reports/{id}", marquee.ScopeReportsRead, withStore(handleGetSavedReport(s.saved))},
		{"PUT", "/api/v1/saved-reports/{id}", marquee.ScopeReportsRead, withStore(handleReplaceSavedReport(s.saved, s.multi))},
		{"DELETE", "/api/v1/saved-reports/{id}", marquee.ScopeReportsRead, withStore(handleDeleteSavedReport(s.saved))},
		{"GET", "/api/v1/saved-reports/{id}/deliveries", marquee.ScopeReportsRead, withStore(handleReportDeliveries(s.saved))},
		{"POST", "/api/v1/saved-reports/{id}/send", marquee.ScopeReportsRead, withStore(handleSendSavedReport(s.saved, s.sender))},
		// Short links: admin, and the redirect (from the cache).
		{"POST", "/api/v1/links", marquee.ScopeLinksWrite, withStore(s.req.audited(handleCreate(linkResource(&s.cfg.LinkDomains), s.links, createLink(s.now), s.writer, linkCreated)))},
		{"GET", "/api/v1/links", marquee.ScopeLinksRead, withStore(handleListLinks(s.links))},
		{"POST", "/api/v1/links/import", marquee.ScopeLinksWrite, withStoreFor(time.Minute, s.req.auditedAs("import", handleImportLinks(s.imports, &s.cfg.LinkDomains)))},
		{"GET", "/api/v1/links/import/{id}", marquee.ScopeLinksRead, handleImportJob(s.imports)},
		{"GET", "/api/v1/links/export", marquee.ScopeLinksRead, withStoreFor(time.Minute, handleExportLinks(s.links))},
		{"GET", "/api/v1/links/{code}", marquee.ScopeLinksRead, withStore(handleGetLink(s.links, &s.cfg.LinkDomains))},
		{"PUT", "/api/v1/links/{code}", marquee.ScopeLinksWrite, withStore(s.req.audited(handleReplace(linkResource(&s.cfg.LinkDomains), s.links, LinkStore.ReplaceLink, linkInput, s.writer)))},
		{"DELETE", "/api/v1/links/{code}", marquee.ScopeLinksWrite, withStore(s.req.audited(handleDelete(linkResource(&s.cfg.LinkDomains), s.links, LinkStore.DeleteLink, s.writer)))},
		{"GET", "/r/{code}", public, handleRedirect(s.linkCache, &s.cfg.LinkDomains, s.geo, s.clicks, s.events, s.metrics.clickEventsDropped)},
		// Advertisers, campaigns and placements: the plan ads serve under.
		{"POST", "/api/v1/advertisers", marquee.ScopeCampaignsWrite, withStore(s.req.audited(handleCreate(advertiserResource, s.campaigns, CampaignStore.CreateAdvertiser, s.writer, advertiserCreated)))},
		{"GET", "/api/v1/advertisers", marquee.ScopeCampaignsRead, withStore(handleList(s.campaigns, CampaignStore.ListAdvertisers, []string{marquee.StateActive, marquee.StateArchived}, false, advertiserKept))},
		{"GET", "/api/v1/advertisers/{id}", marquee.ScopeCampaignsRead, withStore(owned(ownAdvertiser, handleGet(advertiserResource, s.campaigns, CampaignStore.Advertiser)))},
		{"PUT", "/api/v1/advertisers/{id}", marquee.ScopeCampaignsWrite, withStore(s.req.audited(handleReplace(advertiserResource, s.campaigns, CampaignStore.ReplaceAdvertiser, advertiserInput, s.writer)))},
		{"DELETE", "/api/v1/advertisers/{id}", marquee.ScopeCampaignsWrite, withStore(s.req.auditedAs("archive", handleDelete(advertiserResource, s.campaigns, CampaignStore.ArchiveAdvertiser, s.writer)))},
		{"POST", "/api/v1/campaigns", marquee.ScopeCampaignsWrite, withStore(s.req.audited(handleCreate(campaignResource, s.campaigns, createDraft, s.writer, campaignCreated)))},
		{"GET", "/api/v1/campaigns", marquee.ScopeCampaignsRead, withStore(handleList(s.campaigns, CampaignStore.ListCampaigns, marquee.CampaignStates, true, campaignKept))},
		{"GET", "/api/v1/campaigns/{id}", marquee.ScopeCampaignsRead, withStore(owned(ownCampaign(s.campaigns), handleGet(campaignResource, s.campaigns, CampaignStore.Campaign)))},
		{"PUT", "/api/v1/campaigns/{id}", marquee.ScopeCampaignsWrite, withStore(s.req.audited(handleReplace(campaignResource, s.campaigns, CampaignStore.ReplaceCampaign, campaignInput, s.writer)))},
		{"DELETE", "/api/v1/campaigns/{id}", marquee.ScopeCampaignsWrite, withStore(s.req.auditedAs("archive", handleDelete(campaignResource, s.campaigns, archiveCampaign, s.writer)))},
		{"POST", "/api/v1/campaigns/{id}/pause", marquee.ScopeCampaignsWrite, withStore(s.req.auditedAs("pause", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionPause, s.writer)))},
		{"POST", "/api/v1/campaigns/{id}/resume", marquee.ScopeCampaignsWrite, withStore(s.req.auditedAs("resume", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionResume, s.writer)))},
		// Approval: a draft is submitted (by the ad team or the advertiser's
		// own account), then approved or rejected by who may approve.
		{"POST", "/api/v1/campaigns/{id}/submit", marquee.ScopeCampaignsSubmit, withStore(owned(ownCampaign(s.campaigns), s.req.auditedAs("submit", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionSubmit, s.writer))))},
		{"POST", "/api/v1/campaigns/{id}/approve", marquee.ScopeCampaignsApprove, withStore(s.req.auditedAs("approve", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionApprove, s.writer)))},
		// Bulk work: one action or one targeting for many; a clone with its ads.
		{"POST", "/api/v1/campaigns/bulk", marquee.ScopeCampaignsWrite, withStore(s.req.auditedAs("bulk", handleBulkCampaigns(s.campaigns, campaignRules, s.writer)))},
		{"POST", "/api/v1/campaigns/{id}/clone", marquee.ScopeCampaignsWrite, withStore(s.req.auditedAs("clone", handleCloneCampaign(s.campaigns, s.store, s.writer)))},
		{"POST", "/api/v1/campaigns/{id}/reject", marquee.ScopeCampaignsApprove, withStore(s.req.auditedAs("reject", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionReject, s.writer)))},
		// Forecasts: a proposal's availability and contention; the booked
		// campaigns' delivery risk.
		{"POST", "/api/v1/forecasts", marquee.ScopeCampaignsRead, withStore(handleForecast(s.forecasts, s.now))},
		{"GET", "/api/v1/forecasts/risk", marquee.ScopeCampaignsRead, withStore(handleDeliveryRisk(s.forecasts, s.now))},
		{"POST", "/api/v1/placements", marquee.ScopeCampaignsWrite, withStore(s.req.audited(handleCreate(placementResource, s.campaigns, CampaignStore.CreatePlacement, s.writer, placementCreated)))},
		{"GET", "/api/v1/placements", marquee.ScopeCampaignsRead, withStore(handleList(s.campaigns, CampaignStore.ListPlacements, nil, false, placementKept))},
		{"GET", "/api/v1/placements/{name}", marquee.ScopeCampaignsRead, withStore(owned(ownPlacement(s.campaigns), handleGet(placementResource, s.campaigns, CampaignStore.Placement)))},
		{"PUT", "/api/v1/placements/{name}", marquee.ScopeCampaignsWrite, withStore(s.req.audited(handleReplace(placementResource, s.campaigns, CampaignStore.ReplacePlacement, placementInput, s.writer)))},
		{"DELETE", "/api/v1/placements/{name}", marquee.ScopeCampaignsWrite, withStore(s.req.audited(handleDelete(placementResource, s.campaigns, CampaignStore.DeletePlacement, s.writer)))},
		{"POST", "/api/v1/assets", marquee.ScopeCampaignsWrite, withStore(handleUploadAsset(s.assetSt))},
		{"GET", "/assets/{file}", public, handleAsset(s.assets)},
		// Webhooks: where events are POSTed (package webhooks delivers them).
		{"DELETE", "/api/v1/privacy/subjects/{userKey...}", marquee.ScopePrivacyAdmin, withStore(s.req.auditedAs("erase", erase))},
		{"DELETE", "/api/v1/privacy/subjects", marquee.ScopePrivacyAdmin, withStore(s.req.auditedAs("erase", erase))},
		{"POST", "/api/v1/webhooks", marquee.ScopeWebhooksAdmin, withStore(hooksOn(s.req.audited(handleCreateWebhook(s.hookSt, s.hooks, s.cfg.WebhooksAllowHTTP, s.writer))))},
		{"GET", "/api/v1/webhooks", marquee.ScopeWebhooksAdmin, withStore(hooksOn(handleListAll("webhooks", s.hookSt, WebhookStore.Webhooks)))},
		{"GET", "/api/v1/webhooks/{id}", marquee.ScopeWebhooksAdmin, withStore(hooksOn(handleGet(webhookResource, s.hookSt, WebhookStore.Webhook)))},
		{"DELETE", "/api/v1/webhooks/{id}", marquee.ScopeWebhooksAdmin, withStore(hooksOn(s.req.audited(handleDelete(webhookResource, s.hookSt, WebhookStore.DeleteWebhook, s.writer))))},
		{"POST", "/api/v1/webhooks/{id}/enable", marquee.ScopeWebhooksAdmin, withStore(hooksOn(s.req.auditedAs(marquee.WebhookActive, handleWebhookState(s.hookSt, marquee.WebhookActive, s.writer))))},
		{"POST", "/api/v1/webhooks/{id}/disable", marquee.ScopeWebhooksAdmin, withStore(hooksOn(s.req.auditedAs(marquee.WebhookDisabled, handleWebhookState(s.hookSt, marquee.WebhookDisabled, s.writer))))},
		{"POST", "/api/v1/webhooks/{id}/test", marquee.ScopeWebhooksAdmin, withStore(hooksOn(handleTestWebhook(s.hooks)))},
		{"GET", "/api/v1/webhooks/{id}/deliveries", marquee.ScopeWebhooksAdmin, withStore(hooksOn(handleWebhookDeliveries(s.hookSt)))},
		// Access: keys, users, sessions, the audit log.
		{"POST", "/api/v1/keys", marquee.ScopeKeysAdmin, withStore(s.req.audited(handleCreateKey(s.access, s.campaigns, s.now)))},
		{"GET", "/api/v1/keys", marquee.ScopeKeysAdmin, withStore(handleListAll("keys", s.access, AccessStore.Keys))},
		{"DELETE", "/api/v1/keys/{id}", marquee.ScopeKeysAdmin, withStore(s.req.auditedAs("revoke", handleRevokeKey(s.access, s.writer)))},
		{"POST", "/api/v1/users", marquee.ScopeKeysAdmin, withStore(s.req.audited(handleCreateUser(s.access, s.campaigns)))},
		{"GET", "/api/v1/users", marquee.ScopeKeysAdmin, withStore(handleListAll("users", s.access, AccessStore.Users))},
		{"GET", "/api/v1/users/{id}", marquee.ScopeKeysAdmin, withStore(handleGet(userResource, s.access, AccessStore.User))},
		{"PUT", "/api/v1/users/{id}", marquee.ScopeKeysAdmin, withStore(s.req.auditedAs("update", handleUpdateUser(s.access, s.campaigns, s.writer)))},
		{"DELETE", "/api/v1/users/{id}", marquee.ScopeKeysAdmin, withStore(s.req.audited(handleDeleteUser(s.access, s.writer)))},
		{"GET", "/api/v1/audit", marquee.ScopeKeysAdmin, withStore(handleAudit(s.access))},
		{"GET", "/api/v1/setup", public, withStore(handleSetupState(s.access))},
		{"POST", "/api/v1/setup", public, withStore(handleSetup(s.sessions))},
		{"POST", "/api/v1/session", public, withStore(handleSignIn(s.sessions))},
		{"GET", "/api/v1/session", signedIn, withStore(handleGetSession(s.sessions))},
		{"DELETE", "/api/v1/session", signedIn, withStore(handleSignOut(s.sessions))},
		{"PUT", "/api/v1/session/password", signedIn, withStore(handleChangePassword(s.sessions))},
		// Decisions: which ads fill a page's slots, and their signed tracking URLs.
		{"POST", "/api/v1/decisions", public, handleDecisions(s.serve, s.req, s.authenticate)},
		{"GET", "/api/v1/decisions", public, handleDecisions(s.serve, s.req, s.authenticate)},
		{"GET", "/api/v1/floors", public, handleFloors(s.serve)},
		{"OPTIONS", "/api/v1/decisions", public, handlePreflight()},
		{"GET", "/t/{kind}/{token}", public, handleTracking(s.serve, s.req)},
		// Conversions: the advertiser's pixel and postback.
		{"GET", "/conversion", public, handleConversionPixel(s.serve, s.req)},
		{"POST", "/api/v1/conversions", marquee.ScopeConversionsWrite, withStore(handleConversionPost(s.serve, s.req))},
		// The ad tag, HTML creatives' frames, and video ads (VAST).
		{"GET", "/t.js", public, handleTagScript()},
		{"GET", "/tag/{file}", public, handleTagScript()},
		{"GET", "/pb.js", public, handleTagScript()},
		{"GET", "/f/{token}", public, handleFrame(s.serve.Engine(), s.serve.Signer(), s.now)},
		{"GET", "/vast", public, handleVAST(s.serve, s.req)},
		// Events: beacons and batches into the collector.
		{"GET", "/e", public, handleEventGet(s.events)},
		{"POST", "/e", public, handleEventPost(s.events)},
		// Operations.
		{"GET", "/healthz", public, handleHealthz()},
		{"GET", "/readyz", public, handleReadyz(s.store, s.events.sink)},
		{"GET", "/api/v1/live", signedIn, handleLive(s.metrics.reg, s.store, s.events.sink, s.now)},
		{"GET", "/metrics", public, metricsGuard(s.cfg.MetricsToken, plain(fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))))},
	}
}
