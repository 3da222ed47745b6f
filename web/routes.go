package web

import (
	"cmp"
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
	access          access
	handler         handler
}

// access is who may call a route: its scope, and whether an advertiser's
// or a publisher's account (a credential bound to advertisers or sites)
// may, and which (open; every other guarded route answers such an
// account 403). A route open to accounts answers only what is the
// account's (owned, boundList, the report's filters).
type access struct {
	scope  marquee.Scope
	bound  boundKind
	opened bool // open to bound accounts (bound says which)
	// boundScope, when set, is the scope a bound account needs instead
	// of scope: a route whose work the team does with one right and an
	// advertiser's account with a narrower one (its draft campaign with
	// campaigns:submit, its images with ads:write).
	boundScope marquee.Scope
}

// allow is the access of a route behind scope, open to the bound
// accounts open names (at most one kind; none: closed to them).
func allow(scope marquee.Scope, open ...boundKind) access {
	a := access{scope: scope}
	if len(open) > 0 {
		a.bound, a.opened = open[0], true
	}
	return a
}

// allowAs is the access of a route behind scope for the team, open to
// the bound accounts of kind holding boundScope instead.
func allowAs(scope, boundScope marquee.Scope, kind boundKind) access {
	return access{scope: scope, bound: kind, opened: true, boundScope: boundScope}
}

// Route describes a route for documentation and access checks.
type Route struct {
	Method, Pattern string
	Scope           marquee.Scope // "" public; "signed-in" any valid credential
	// BoundScope is what an advertiser's or publisher's account needs
	// instead ("": Scope).
	BoundScope marquee.Scope
}

// Routes lists every route the server answers.
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range s.routes() {
		out = append(out, Route{r.method, r.pattern, r.access.scope, r.access.boundScope})
	}
	return out
}

// routes is the one page that lists every route, its access (scope, and
// whether advertisers' and publishers' accounts may call it) and its
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
		{"GET", "/", allow(public), plain(toConsole)},
		{"GET", "/admin", allow(public), plain(s.console)},
		{"GET", "/admin/{asset...}", allow(public), plain(s.console)},
	}
}

// toConsole sends a browser that opens the server's root to the console.
func toConsole(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Location", "/admin/")
	ctx.SetStatusCode(fasthttp.StatusFound)
}

func (s *Server) apiRoutes() []route {
	// Ads and campaigns whose targeting reads below the country need GeoIP.
	adResource := adResource.checked(func(in *marquee.AdInput) marquee.Problems { return geoRules(s.cfg.GeoPlaces, in.Targeting) })
	campaignRules := func(in *marquee.CampaignInput) marquee.Problems {
		return merge(geoRules(s.cfg.GeoPlaces, in.Targeting), moneyRules(s.serve.Currency(), in.Price, in.Budget))
	}
	campaignResource := campaignResource.checked(campaignRules)
	advertiserResource := advertiserResource.checked(func(in *marquee.AdvertiserInput) marquee.Problems {
		return moneyRules(s.serve.Currency(), nil, in.Budget)
	})
	erase := handleEraseSubject(s.privSt, s.forget, s.events.Policy(), s.retention, s.writer, s.now)
	hooksOn := func(h storeHandler) storeHandler { return webhooksOn(s.hookSt, s.hooks, h) }
	return []route{
		// The ad contract (docs/api.md).
		{"GET", "/api/v1/ad", allow(public), handleListAds(s.index, s.now)},
		{"POST", "/api/v1/ad", allow(marquee.ScopeAdsWrite, advertiserBound), withStore(s.req.audited(byBounds(handleCreate(adResource, s.store, AdStore.CreateAd, s.writer, adCreated),
			handleAdByAdvertiser(adResource, s.store, s.campaigns, s.writer, false))))},
		// Beyond the contract: ads by id (from the cache), admin reads and writes.
		{"GET", "/api/v1/ad/{id}", allow(public), handleGetAd(s.adCache)},
		{"PUT", "/api/v1/ad/{id}", allow(marquee.ScopeAdsWrite, advertiserBound), withStore(s.req.audited(byBounds(handleReplace(adResource, s.store, AdStore.ReplaceAd, adInput, s.writer),
			owned(ownAd(s.store, s.campaigns), handleAdByAdvertiser(adResource, s.store, s.campaigns, s.writer, true)))))},
		{"DELETE", "/api/v1/ad/{id}", allow(marquee.ScopeAdsWrite, advertiserBound), withStore(s.req.audited(owned(ownAd(s.store, s.campaigns), handleDelete(adResource, s.store, AdStore.DeleteAd, s.writer))))},
		{"POST", "/api/v1/ad/{id}/pause", allow(marquee.ScopeAdsWrite, advertiserBound), withStore(s.req.auditedAs("pause", owned(ownAd(s.store, s.campaigns), handleMove("ad", adID, s.store, AdStore.MoveAd, marquee.ActionPause, s.writer))))},
		{"POST", "/api/v1/ad/{id}/resume", allow(marquee.ScopeAdsWrite, advertiserBound), withStore(s.req.auditedAs("resume", owned(ownAd(s.store, s.campaigns), handleMove("ad", adID, s.store, AdStore.MoveAd, marquee.ActionResume, s.writer))))},
		{"POST", "/api/v1/ad/{id}/approve", allow(marquee.ScopeCampaignsApprove), withStore(s.req.auditedAs("approve", handleMove("ad", adID, s.store, AdStore.MoveAd, marquee.ActionApprove, s.writer)))},
		{"POST", "/api/v1/ad/{id}/reject", allow(marquee.ScopeCampaignsApprove), withStore(s.req.auditedAs("reject", handleMove("ad", adID, s.store, AdStore.MoveAd, marquee.ActionReject, s.writer)))},
		{"GET", "/api/v1/ads", allow(marquee.ScopeAdsRead, advertiserBound), withStore(handleAdminListAds(s.store, s.campaigns, s.now))},
		// Reports.
		{"GET", "/api/v1/ad/{id}/stats", allow(marquee.ScopeReportsRead, advertiserBound), withStore(owned(ownAd(s.store, s.campaigns), handleStats(adStats(s.store), s.reports)))},
		{"GET", "/api/v1/links/{code}/stats", allow(marquee.ScopeReportsRead), withStore(handleStats(linkStats(s.links, &s.cfg.LinkDomains), s.reports))},
		{"GET", "/api/v1/stats", allow(marquee.ScopeReportsRead), withStore(handleOverallStats(s.reports, s.campaigns))},
		{"GET", "/api/v1/advertisers/{id}/stats", allow(marquee.ScopeReportsRead, advertiserBound), withStore(owned(ownAdvertiser, handleStats(advertiserStats(s.campaigns, s.reports), s.reports)))},
		{"GET", "/api/v1/campaigns/{id}/delivery", allow(marquee.ScopeCampaignsRead, advertiserBound), withStore(owned(ownCampaign(s.campaigns), handleCampaignDelivery(s.campaigns, s.serve.Engine(), s.now)))},
		{"GET", "/api/v1/campaigns/{id}/stats", allow(marquee.ScopeReportsRead, advertiserBound), withStore(owned(ownCampaign(s.campaigns), handleStats(campaignStats(s.campaigns, s.reports), s.reports)))},
		{"GET", "/api/v1/placements/{name}/stats", allow(marquee.ScopeReportsRead, publisherBound), withStore(owned(ownPlacement(s.campaigns), handleStats(placementStats(s.campaigns), s.reports)))},
		{"GET", "/api/v1/bidders/stats", allow(marquee.ScopeReportsRead, publisherBound), withStore(handleBidStats(s.bidSt, s.reports, s.serve.Engine()))},
		{"GET", "/api/v1/reports", allow(marquee.ScopeReportsRead, anyBound), withStore(handleMultiReport(s.multi))},
		{"POST", "/api/v1/invoices", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleIssueInvoice(s.billing, s.now, false)))},
		{"GET", "/api/v1/invoices", allow(marquee.ScopeReportsRead, advertiserBound), withStore(handleListInvoices(s.invoiceSt))},
		{"GET", "/api/v1/invoices/{id}", allow(marquee.ScopeReportsRead, advertiserBound), withStore(handleGetInvoice(s.invoiceSt, cmp.Or(s.cfg.InvoiceIssuer, "Marquee"), false))},
		{"POST", "/api/v1/invoices/{id}/credit", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("credit", handleCreditInvoice(s.billing, s.invoiceSt)))},
		{"POST", "/api/v1/statements", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleIssueInvoice(s.billing, s.now, true)))},
		{"GET", "/api/v1/statements", allow(marquee.ScopeReportsRead, publisherBound), withStore(handleListStatements(s.invoiceSt))},
		{"GET", "/api/v1/statements/{id}", allow(marquee.ScopeReportsRead, publisherBound), withStore(handleGetInvoice(s.invoiceSt, cmp.Or(s.cfg.InvoiceIssuer, "Marquee"), true))},
		{"POST", "/api/v1/sites", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleCreateSite(s.sites, s.writer)))},
		{"GET", "/api/v1/sites", allow(marquee.ScopeCampaignsRead, publisherBound), withStore(handleListSites(s.sites))},
		{"GET", "/api/v1/sites/{name}", allow(marquee.ScopeCampaignsRead, publisherBound), withStore(handleGetSite(s.sites))},
		{"PUT", "/api/v1/sites/{name}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleReplaceSite(s.sites, s.writer)))},
		{"DELETE", "/api/v1/sites/{name}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("delete", handleDeleteSite(s.sites, s.writer)))},
		{"GET", "/api/v1/sites/{name}/ads.txt", allow(marquee.ScopeCampaignsRead, publisherBound), withStore(handleAdsTxtLine(s.sites, s.cfg.Seller))},
		{"GET", "/api/v1/sites/{name}/quality", allow(marquee.ScopeReportsRead, publisherBound), withStore(handleSiteQuality(s.sites, s.campaigns, s.reports))},
		{"POST", "/api/v1/sites/{name}/ads-txt/check", allow(marquee.ScopeCampaignsRead, publisherBound), withStore(handleCheckAdsTxt(s.adsTxt, s.writer))},
		{"POST", "/api/v1/deals", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleCreateDeal(s.deals, s.writer)))},
		{"GET", "/api/v1/deals", allow(marquee.ScopeCampaignsRead), withStore(handleListDeals(s.deals))},
		{"GET", "/api/v1/deals/{id}", allow(marquee.ScopeCampaignsRead), withStore(handleGetDeal(s.deals))},
		{"PUT", "/api/v1/deals/{id}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleReplaceDeal(s.deals, s.writer)))},
		{"DELETE", "/api/v1/deals/{id}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("delete", handleDeleteDeal(s.deals, s.writer)))},
		{"POST", "/api/v1/demand-partners", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleCreatePartner(s.partners, s.writer)))},
		{"GET", "/api/v1/demand-partners", allow(marquee.ScopeCampaignsRead), withStore(handleListPartners(s.partners, s.partnerHealth))},
		{"GET", "/api/v1/demand-partners/{name}", allow(marquee.ScopeCampaignsRead), withStore(handleGetPartner(s.partners))},
		{"PUT", "/api/v1/demand-partners/{name}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleReplacePartner(s.partners, s.writer)))},
		{"DELETE", "/api/v1/demand-partners/{name}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("delete", handleDeletePartner(s.partners, s.writer)))},
		{"GET", "/api/v1/settings/report-keys", allow(marquee.ScopeReportsRead, anyBound), withStore(handleGetReportKeys(s.reportKeys))},
		{"PUT", "/api/v1/settings/report-keys", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handlePutReportKeys(s.settings, s.writer)))},
		{"POST", "/api/v1/saved-reports", allow(marquee.ScopeReportsRead, anyBound), withStore(handleCreateSavedReport(s.saved, s.multi, s.users, s.cfg.ReportMailDomains))},
		{"GET", "/api/v1/saved-reports", allow(marquee.ScopeReportsRead, anyBound), withStore(handleListSavedReports(s.saved))},
		{"GET", "/api/v1/saved-reports/{id}", allow(marquee.ScopeReportsRead, anyBound), withStore(handleGetSavedReport(s.saved))},
		{"PUT", "/api/v1/saved-reports/{id}", allow(marquee.ScopeReportsRead, anyBound), withStore(handleReplaceSavedReport(s.saved, s.multi, s.users, s.cfg.ReportMailDomains))},
		{"DELETE", "/api/v1/saved-reports/{id}", allow(marquee.ScopeReportsRead, anyBound), withStore(handleDeleteSavedReport(s.saved))},
		{"GET", "/api/v1/saved-reports/{id}/deliveries", allow(marquee.ScopeReportsRead, anyBound), withStore(handleReportDeliveries(s.saved))},
		{"POST", "/api/v1/saved-reports/{id}/send", allow(marquee.ScopeReportsRead, anyBound), withStore(handleSendSavedReport(s.saved, s.sender))},
		// Short links: admin, and the redirect (from the cache).
		{"POST", "/api/v1/links", allow(marquee.ScopeLinksWrite), withStore(s.req.audited(handleCreate(linkResource(&s.cfg.LinkDomains), s.links, createLink(s.now), s.writer, linkCreated)))},
		{"GET", "/api/v1/links", allow(marquee.ScopeLinksRead), withStore(handleListLinks(s.links))},
		{"POST", "/api/v1/links/import", allow(marquee.ScopeLinksWrite), withStoreFor(time.Minute, s.req.auditedAs("import", handleImportLinks(s.imports, &s.cfg.LinkDomains)))},
		{"GET", "/api/v1/links/import/{id}", allow(marquee.ScopeLinksRead), handleImportJob(s.imports)},
		{"GET", "/api/v1/links/export", allow(marquee.ScopeLinksRead), withStoreFor(time.Minute, handleExportLinks(s.links))},
		{"GET", "/api/v1/links/{code}", allow(marquee.ScopeLinksRead), withStore(handleGetLink(s.links, &s.cfg.LinkDomains))},
		{"PUT", "/api/v1/links/{code}", allow(marquee.ScopeLinksWrite), withStore(s.req.audited(handleReplace(linkResource(&s.cfg.LinkDomains), s.links, LinkStore.ReplaceLink, linkInput, s.writer)))},
		{"DELETE", "/api/v1/links/{code}", allow(marquee.ScopeLinksWrite), withStore(s.req.audited(handleDelete(linkResource(&s.cfg.LinkDomains), s.links, LinkStore.DeleteLink, s.writer)))},
		{"GET", "/r/{code}", allow(public), handleRedirect(s.linkCache, &s.cfg.LinkDomains, s.geo, s.clicks, s.events, s.metrics.clickEventsDropped)},
		// Advertisers, campaigns and placements: the plan ads serve under.
		{"POST", "/api/v1/advertisers", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleCreate(advertiserResource, s.campaigns, CampaignStore.CreateAdvertiser, s.writer, advertiserCreated)))},
		{"GET", "/api/v1/advertisers", allow(marquee.ScopeCampaignsRead, advertiserBound), withStore(handleList(s.campaigns, CampaignStore.ListAdvertisers, []string{marquee.StateActive, marquee.StateArchived}, false, advertiserKept))},
		{"GET", "/api/v1/advertisers/{id}", allow(marquee.ScopeCampaignsRead, advertiserBound), withStore(owned(ownAdvertiser, handleGet(advertiserResource, s.campaigns, CampaignStore.Advertiser)))},
		{"PUT", "/api/v1/advertisers/{id}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleReplace(advertiserResource, s.campaigns, CampaignStore.ReplaceAdvertiser, advertiserInput, s.writer)))},
		{"POST", "/api/v1/advertisers/{id}/conversion-secret", allow(marquee.ScopeConversionsWrite, advertiserBound), withStore(notPostOnly(owned(ownAdvertiser, s.req.auditedAs("rotate conversion secret", handleConversionSecret(s.campaigns, s.serve, s.writer)))))},
		// An advertiser's postback keys: made, listed and revoked by its own account too.
		{"POST", "/api/v1/advertisers/{id}/postback-keys", allow(marquee.ScopeConversionsWrite, advertiserBound), withStore(notPostOnly(owned(ownAdvertiser, s.req.auditedAs("create postback key", handleCreatePostbackKey(s.access, s.campaigns)))))},
		{"GET", "/api/v1/advertisers/{id}/postback-keys", allow(marquee.ScopeConversionsWrite, advertiserBound), withStore(notPostOnly(owned(ownAdvertiser, handleListPostbackKeys(s.access))))},
		{"DELETE", "/api/v1/advertisers/{id}/postback-keys/{key}", allow(marquee.ScopeConversionsWrite, advertiserBound), withStore(notPostOnly(owned(ownAdvertiser, s.req.auditedAs("revoke", handleRevokePostbackKey(s.access, s.writer)))))},
		// Prepaid balances: topped up by card (the team, or the advertiser's
		// own account) or credited (the team); Stripe's webhook credits a
		// card payment once, its signature the credential.
		// A top-up waits for Stripe to open its Checkout Session (retried twice).
		{"POST", "/api/v1/advertisers/{id}/top-ups", allow(marquee.ScopeBillingWrite, advertiserBound), withStoreFor(20*time.Second, owned(ownAdvertiser, s.req.audited(handleCreateTopUp(s.billing, s.req))))},
		{"GET", "/api/v1/advertisers/{id}/balance", allow(marquee.ScopeReportsRead, advertiserBound), withStore(owned(ownAdvertiser, handleBalance(s.billing)))},
		{"POST", "/stripe/webhook", allow(public), withStore(handleStripeWebhook(s.billing, s.req))},
		{"DELETE", "/api/v1/advertisers/{id}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("archive", handleDelete(advertiserResource, s.campaigns, CampaignStore.ArchiveAdvertiser, s.writer)))},
		{"POST", "/api/v1/campaigns", allowAs(marquee.ScopeCampaignsWrite, marquee.ScopeCampaignsSubmit, advertiserBound), withStore(s.req.audited(byBounds(
			handleCreate(campaignResource, s.campaigns, createDraft, s.writer, campaignCreated), handleCampaignByAdvertiser(campaignResource, s.campaigns, s.writer, false))))},
		{"GET", "/api/v1/campaigns", allow(marquee.ScopeCampaignsRead, advertiserBound), withStore(handleList(s.campaigns, CampaignStore.ListCampaigns, marquee.CampaignStates, true, campaignKept))},
		{"GET", "/api/v1/campaigns/{id}", allow(marquee.ScopeCampaignsRead, advertiserBound), withStore(owned(ownCampaign(s.campaigns), handleGet(campaignResource, s.campaigns, CampaignStore.Campaign)))},
		{"PUT", "/api/v1/campaigns/{id}", allowAs(marquee.ScopeCampaignsWrite, marquee.ScopeCampaignsSubmit, advertiserBound), withStore(s.req.audited(byBounds(
			handleReplace(campaignResource, s.campaigns, CampaignStore.ReplaceCampaign, campaignInput, s.writer),
			owned(ownCampaign(s.campaigns), handleCampaignByAdvertiser(campaignResource, s.campaigns, s.writer, true)))))},
		{"DELETE", "/api/v1/campaigns/{id}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("archive", handleDelete(campaignResource, s.campaigns, archiveCampaign, s.writer)))},
		{"POST", "/api/v1/campaigns/{id}/pause", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("pause", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionPause, s.writer)))},
		{"POST", "/api/v1/campaigns/{id}/resume", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("resume", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionResume, s.writer)))},
		// Approval: a draft is submitted (by the ad team or the advertiser's
		// own account), then approved or rejected by who may approve.
		{"POST", "/api/v1/campaigns/{id}/submit", allow(marquee.ScopeCampaignsSubmit, advertiserBound), withStore(owned(ownCampaign(s.campaigns), s.req.auditedAs("submit", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionSubmit, s.writer))))},
		{"POST", "/api/v1/campaigns/{id}/approve", allow(marquee.ScopeCampaignsApprove), withStore(s.req.auditedAs("approve", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionApprove, s.writer)))},
		// Bulk work: one action or one targeting for many; a clone with its ads.
		{"POST", "/api/v1/campaigns/bulk", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("bulk", handleBulkCampaigns(s.campaigns, campaignRules, s.writer)))},
		{"POST", "/api/v1/campaigns/{id}/clone", allow(marquee.ScopeCampaignsWrite), withStore(s.req.auditedAs("clone", handleCloneCampaign(s.campaigns, s.store, s.writer)))},
		{"POST", "/api/v1/campaigns/{id}/reject", allow(marquee.ScopeCampaignsApprove), withStore(s.req.auditedAs("reject", handleMove("campaign", campaignID, s.campaigns, CampaignStore.MoveCampaign, marquee.ActionReject, s.writer)))},
		// Forecasts: a proposal's availability and contention; the booked
		// campaigns' delivery risk.
		{"POST", "/api/v1/forecasts", allow(marquee.ScopeCampaignsRead), withStore(handleForecast(s.forecasts, s.now))},
		{"GET", "/api/v1/forecasts/risk", allow(marquee.ScopeCampaignsRead), withStore(handleDeliveryRisk(s.forecasts, s.now))},
		{"POST", "/api/v1/placements", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleCreate(placementResource, s.campaigns, CampaignStore.CreatePlacement, s.writer, placementCreated)))},
		{"GET", "/api/v1/placements", allow(marquee.ScopeCampaignsRead, publisherBound), withStore(handleList(s.campaigns, CampaignStore.ListPlacements, nil, false, placementKept))},
		{"GET", "/api/v1/placements/{name}", allow(marquee.ScopeCampaignsRead, publisherBound), withStore(owned(ownPlacement(s.campaigns), handleGet(placementResource, s.campaigns, CampaignStore.Placement)))},
		{"PUT", "/api/v1/placements/{name}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleReplace(placementResource, s.campaigns, CampaignStore.ReplacePlacement, placementInput, s.writer)))},
		{"DELETE", "/api/v1/placements/{name}", allow(marquee.ScopeCampaignsWrite), withStore(s.req.audited(handleDelete(placementResource, s.campaigns, CampaignStore.DeletePlacement, s.writer)))},
		{"POST", "/api/v1/assets", allowAs(marquee.ScopeCampaignsWrite, marquee.ScopeAdsWrite, advertiserBound), withStore(handleUploadAsset(s.assetSt))},
		{"GET", "/assets/{file}", allow(public), handleAsset(s.assets)},
		// Webhooks: where events are POSTed (package webhooks delivers them).
		{"DELETE", "/api/v1/privacy/subjects/{userKey...}", allow(marquee.ScopePrivacyAdmin), withStore(s.req.auditedAs("erase", erase))},
		{"DELETE", "/api/v1/privacy/subjects", allow(marquee.ScopePrivacyAdmin), withStore(s.req.auditedAs("erase", erase))},
		{"POST", "/api/v1/webhooks", allow(marquee.ScopeWebhooksAdmin), withStore(hooksOn(s.req.audited(handleCreateWebhook(s.hookSt, s.hooks, s.cfg.WebhooksAllowHTTP, s.writer))))},
		{"GET", "/api/v1/webhooks", allow(marquee.ScopeWebhooksAdmin), withStore(hooksOn(handleListAll("webhooks", s.hookSt, WebhookStore.Webhooks)))},
		{"GET", "/api/v1/webhooks/{id}", allow(marquee.ScopeWebhooksAdmin), withStore(hooksOn(handleGet(webhookResource, s.hookSt, WebhookStore.Webhook)))},
		{"DELETE", "/api/v1/webhooks/{id}", allow(marquee.ScopeWebhooksAdmin), withStore(hooksOn(s.req.audited(handleDelete(webhookResource, s.hookSt, WebhookStore.DeleteWebhook, s.writer))))},
		{"POST", "/api/v1/webhooks/{id}/enable", allow(marquee.ScopeWebhooksAdmin), withStore(hooksOn(s.req.auditedAs(marquee.WebhookActive, handleWebhookState(s.hookSt, marquee.WebhookActive, s.writer))))},
		{"POST", "/api/v1/webhooks/{id}/disable", allow(marquee.ScopeWebhooksAdmin), withStore(hooksOn(s.req.auditedAs(marquee.WebhookDisabled, handleWebhookState(s.hookSt, marquee.WebhookDisabled, s.writer))))},
		{"POST", "/api/v1/webhooks/{id}/test", allow(marquee.ScopeWebhooksAdmin), withStore(hooksOn(handleTestWebhook(s.hooks)))},
		{"GET", "/api/v1/webhooks/{id}/deliveries", allow(marquee.ScopeWebhooksAdmin), withStore(hooksOn(handleWebhookDeliveries(s.hookSt)))},
		// Access: keys, users, sessions, the audit log.
		{"POST", "/api/v1/keys", allow(marquee.ScopeKeysAdmin), withStore(s.req.audited(handleCreateKey(s.access, s.campaigns, s.now)))},
		{"GET", "/api/v1/keys", allow(marquee.ScopeKeysAdmin), withStore(handleListAll("keys", s.access, AccessStore.Keys))},
		{"DELETE", "/api/v1/keys/{id}", allow(marquee.ScopeKeysAdmin), withStore(s.req.auditedAs("revoke", handleRevokeKey(s.access, s.writer)))},
		{"POST", "/api/v1/users", allow(marquee.ScopeKeysAdmin), withStore(s.req.audited(handleCreateUser(s.access, s.campaigns, s.req, s.mailer, s.now)))},
		{"GET", "/api/v1/users", allow(marquee.ScopeKeysAdmin), withStore(handleListAll("users", s.access, AccessStore.Users))},
		{"GET", "/api/v1/users/{id}", allow(marquee.ScopeKeysAdmin), withStore(handleGet(userResource, s.access, AccessStore.User))},
		{"PUT", "/api/v1/users/{id}", allow(marquee.ScopeKeysAdmin), withStore(s.req.auditedAs("update", handleUpdateUser(s.access, s.campaigns, s.writer)))},
		{"POST", "/api/v1/users/{id}/invitation", allow(marquee.ScopeKeysAdmin), withStore(s.req.auditedAs("invite", handleInviteUser(s.access, s.campaigns, s.req, s.mailer, s.now, s.writer)))},
		{"DELETE", "/api/v1/users/{id}", allow(marquee.ScopeKeysAdmin), withStore(s.req.audited(handleDeleteUser(s.access, s.writer)))},
		{"GET", "/api/v1/audit", allow(marquee.ScopeKeysAdmin), withStore(handleAudit(s.access))},
		{"GET", "/api/v1/setup", allow(public), withStore(handleSetupState(s.access))},
		{"POST", "/api/v1/setup", allow(public), withStore(handleSetup(s.sessions))},
		{"POST", "/api/v1/session", allow(public), withStore(handleSignIn(s.sessions))},
		{"POST", "/api/v1/invitations", allow(public), withStore(handleAcceptInvitation(s.sessions))},
		{"GET", "/api/v1/session", allow(signedIn, anyBound), withStore(handleGetSession(s.sessions))},
		{"DELETE", "/api/v1/session", allow(signedIn, anyBound), withStore(handleSignOut(s.sessions))},
		{"PUT", "/api/v1/session/password", allow(signedIn, anyBound), withStore(handleChangePassword(s.sessions))},
		// Decisions: which ads fill a page's slots, and their signed tracking URLs.
		{"POST", "/api/v1/decisions", allow(public), handleDecisions(s.serve, s.req, s.authenticate, s.cfg.CreativeOrigin)},
		{"POST", "/openrtb2/auction", allow(public), handleAuction(s.serve, s.req, s.cfg.CreativeOrigin)},
		{"GET", "/status", allow(public), handleStatus()},
		{"GET", "/api/v1/decisions", allow(public), handleDecisions(s.serve, s.req, s.authenticate, s.cfg.CreativeOrigin)},
		{"GET", "/api/v1/floors", allow(public), handleFloors(s.serve, s.cfg.Seller)},
		{"OPTIONS", "/api/v1/decisions", allow(public), handlePreflight()},
		{"GET", "/t/{kind}/{token}", allow(public), handleTracking(s.serve, s.req)},
		{"GET", "/p/{token}", allow(public), handleRenderProof(s.serve)},
		// Conversions: the advertiser's pixel and postback.
		{"GET", "/conversion", allow(public), handleConversionPixel(s.serve, s.req)},
		{"POST", "/api/v1/conversions", allow(marquee.ScopeConversionsWrite, advertiserBound), withStore(handleConversionPost(s.serve, s.req))},
		// The ad tag, HTML creatives' frames, and video ads (VAST).
		{"GET", "/t.js", allow(public), handleTagScript()},
		{"GET", "/tag/{file}", allow(public), handleTagScript()},
		{"GET", "/pb.js", allow(public), handleTagScript()},
		{"GET", "/f/{token}", allow(public), handleFrame(s.serve.Engine(), s.serve.Signer(), s.serve.Demand(), s.cfg.PublicURL, s.now)},
		{"GET", "/api/v1/creative-preview", allow(marquee.ScopeAdsRead, advertiserBound), handleCreativePreview(s.serve.Signer(), s.cfg.CreativeOrigin, s.req, s.now)},
		{"GET", BidFramePath, allow(public), handleBidFrame()},
		{"GET", "/vast", allow(public), handleVAST(s.serve, s.req)},
		{"GET", "/vmap", allow(public), handleVMAP(s.serve, s.req)},
		// What buyers check: the network's sellers.json.
		{"GET", "/sellers.json", allow(public), withStore(handleSellersJSON(s.sites, s.cfg.Seller, s.now))},
		// Events: beacons and batches into the collector.
		{"GET", "/e", allow(public), handleEventGet(s.events)},
		{"POST", "/e", allow(public), handleEventPost(s.events)},
		// Operations.
		{"GET", "/healthz", allow(public), handleHealthz()},
		{"GET", "/readyz", allow(public), handleReadyz(s.store, s.events.Sink())},
		{"GET", "/api/v1/live", allow(signedIn), handleLive(s.metrics.reg, s.store, s.events.Sink(), s.now)},
		{"GET", "/metrics", allow(public), metricsGuard(s.cfg.MetricsToken, plain(fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))))},
	}
}
