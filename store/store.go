// Package store names the contract every store meets, in the vocabulary's
// types and report rows only, so that the stores sit below every package
// that uses one: the HTTP edge (web.AdStore, web.LinkStore,
// web.AccessStore), auth (auth.Store, auth.LoginStore), the feed
// (feed.Source), the click counter (clicks.Store) and reports
// (reports.Store, reports.Reader) each declare the methods they call, and
// Store holds them all, with what seeding and shutdown need. The binary
// (cmd/marquee, which checks at compile time that Store meets each
// consumer's interface) and the conformance suite (storetest) hold every
// store to it. The stores are store/sqlite, store/postgres and
// store/mysql, written over store/sqltx.
package store

import (
	"context"
	"time"

	"marquee"
	"marquee/reportrow"
)

// Store is everything a store provides. Each method's promise is written
// where its consumer declares it.
type Store interface {
	// Ads (web.AdStore, feed.Source).
	CreateAd(ctx context.Context, in marquee.AdInput) (marquee.Ad, error)
	ReplaceAd(ctx context.Context, id int64, in marquee.AdInput) (marquee.Ad, error)
	DeleteAd(ctx context.Context, id int64) error
	Ad(ctx context.Context, id int64) (marquee.Ad, error)
	ListAds(ctx context.Context, f marquee.AdFilter) ([]marquee.Ad, int, error)
	EachLiveAd(ctx context.Context, now time.Time, fn func(*marquee.Ad) error) error
	EachCampaignAd(ctx context.Context, now time.Time, fn func(*marquee.Ad) error) error

	// Links (web.LinkStore) and their clicks (clicks.Store).
	CreateLink(ctx context.Context, in marquee.LinkInput) (marquee.Link, error)
	ReplaceLink(ctx context.Context, code string, in marquee.LinkInput) (marquee.Link, error)
	DeleteLink(ctx context.Context, code string) error
	Link(ctx context.Context, code string) (marquee.Link, error)
	LinkTarget(ctx context.Context, code string) (marquee.Link, error)
	ListLinks(ctx context.Context, offset, limit int) ([]marquee.Link, int, error)
	SearchLinks(ctx context.Context, f marquee.LinkFilter, offset, limit int) ([]marquee.Link, int, error)
	ImportLinks(ctx context.Context, ins []marquee.LinkInput, opt marquee.ImportOptions, progress func(done int)) (marquee.ImportResult, error)
	AddClicks(ctx context.Context, counts []marquee.Clicks) error

	// Advertisers, campaigns and placements (web.CampaignStore).
	CreateAdvertiser(ctx context.Context, in marquee.AdvertiserInput) (marquee.Advertiser, error)
	Advertiser(ctx context.Context, id int64) (marquee.Advertiser, error)
	ReplaceAdvertiser(ctx context.Context, id int64, in marquee.AdvertiserInput) (marquee.Advertiser, error)
	ArchiveAdvertiser(ctx context.Context, id int64) error
	SetConversionNonce(ctx context.Context, id int64, nonce string) error
	IssueInvoice(ctx context.Context, inv marquee.Invoice) (marquee.Invoice, error)
	Invoice(ctx context.Context, id int64) (marquee.Invoice, error)
	ListInvoices(ctx context.Context, advertiser int64, limit int) ([]marquee.Invoice, error)
	ListStatements(ctx context.Context, site string, limit int) ([]marquee.Invoice, error)
	// Prepaid balances (web.TopUpStore).
	CreateTopUp(ctx context.Context, t marquee.TopUp) (marquee.TopUp, error)
	AttachCheckout(ctx context.Context, id int64, sessionID, url string, failed bool) (marquee.TopUp, error)
	CreditPayment(ctx context.Context, p marquee.CardPayment) (marquee.TopUp, error)
	RefundPayment(ctx context.Context, r marquee.CardRefund) (marquee.TopUp, error)
	DisputePayment(ctx context.Context, d marquee.CardDispute) (marquee.TopUp, error)
	TopUp(ctx context.Context, id int64) (marquee.TopUp, error)
	ListTopUps(ctx context.Context, advertiser int64, paidFrom, paidTo time.Time, limit int) ([]marquee.TopUp, error)
	CreateSite(ctx context.Context, s marquee.Site) (marquee.Site, error)
	Site(ctx context.Context, name string) (marquee.Site, error)
	ListSites(ctx context.Context) ([]marquee.Site, error)
	ReplaceSite(ctx context.Context, name string, s marquee.Site) (marquee.Site, error)
	DeleteSite(ctx context.Context, name string) error
	ClaimAdsTxtCheck(ctx context.Context, name string, now time.Time, since time.Duration) (bool, error)
	SetAdsTxtCheck(ctx context.Context, name string, c marquee.AdsTxtCheck) error
	ClaimQualityCheck(ctx context.Context, name string, hour time.Time) (bool, error)
	SetQualityAlarm(ctx context.Context, name string, a marquee.QualityAlarm) error
	CreateDeal(ctx context.Context, d marquee.Deal) (marquee.Deal, error)
	Deal(ctx context.Context, id string) (marquee.Deal, error)
	ListDeals(ctx context.Context) ([]marquee.Deal, error)
	ReplaceDeal(ctx context.Context, id string, d marquee.Deal) (marquee.Deal, error)
	DeleteDeal(ctx context.Context, id string) error
	CreateDemandPartner(ctx context.Context, p marquee.DemandPartner) (marquee.DemandPartner, error)
	DemandPartner(ctx context.Context, name string) (marquee.DemandPartner, error)
	ListDemandPartners(ctx context.Context) ([]marquee.DemandPartner, error)
	ReplaceDemandPartner(ctx context.Context, name string, p marquee.DemandPartner, keepHeaders bool) (marquee.DemandPartner, error)
	DeleteDemandPartner(ctx context.Context, name string) error
	// The install's settings chosen at run time (marquee.Setting…).
	Setting(ctx context.Context, name string) (value string, ok bool, err error)
	PutSetting(ctx context.Context, name, value string) error
	ListAdvertisers(ctx context.Context, f marquee.ListFilter) ([]marquee.Advertiser, int, error)
	// Ads of campaigns written by an advertiser's account wait for
	// approval (web.CampaignStore).
	CreateAdAs(ctx context.Context, in marquee.AdInput, state string) (marquee.Ad, error)
	ReplaceAdAs(ctx context.Context, id int64, in marquee.AdInput, state string) (marquee.Ad, error)
	MoveAd(ctx context.Context, id int64, action, reason string) (marquee.Ad, error)
	CreateCampaign(ctx context.Context, in marquee.CampaignInput, state string) (marquee.Campaign, error)
	Campaign(ctx context.Context, id int64) (marquee.Campaign, error)
	ReplaceCampaign(ctx context.Context, id int64, in marquee.CampaignInput) (marquee.Campaign, error)
	MoveCampaign(ctx context.Context, id int64, action, reason string) (marquee.Campaign, error)
	ListCampaigns(ctx context.Context, f marquee.ListFilter) ([]marquee.Campaign, int, error)
	LiveCampaigns(ctx context.Context) ([]marquee.Campaign, error)
	CreatePlacement(ctx context.Context, in marquee.PlacementInput) (marquee.Placement, error)
	Placement(ctx context.Context, name string) (marquee.Placement, error)
	ReplacePlacement(ctx context.Context, name string, in marquee.PlacementInput) (marquee.Placement, error)
	DeletePlacement(ctx context.Context, name string) error
	ListPlacements(ctx context.Context, f marquee.ListFilter) ([]marquee.Placement, int, error)
	PutAsset(ctx context.Context, a marquee.Asset, body []byte) (marquee.Asset, bool, error)
	Asset(ctx context.Context, sha string) (marquee.Asset, []byte, error)

	// The erasure of a data subject (web.PrivacyStore).
	EraseSubject(ctx context.Context, pseudonyms []uint64) error
	// Webhooks and their delivery log (web.WebhookStore, webhooks.Store).
	CreateWebhook(ctx context.Context, in marquee.WebhookInput, nonce string) (marquee.Webhook, error)
	Webhook(ctx context.Context, id int64) (marquee.Webhook, error)
	Webhooks(ctx context.Context) ([]marquee.Webhook, error)
	SetWebhookState(ctx context.Context, id int64, state, reason string) (marquee.Webhook, error)
	DeleteWebhook(ctx context.Context, id int64) error
	AddWebhookDeliveries(ctx context.Context, ds []marquee.WebhookDelivery) error
	WebhookDeliveries(ctx context.Context, id int64, limit int) ([]marquee.WebhookDelivery, error)

	// Users, keys, sessions, sign-in and the audit log (web.AccessStore,
	// auth.Store, auth.LoginStore).
	CreateUser(ctx context.Context, u marquee.User, passwordHash string) (marquee.User, error)
	CreateFirstUser(ctx context.Context, email, role, passwordHash string) (marquee.User, error)
	HasUsers(ctx context.Context) (bool, error)
	Users(ctx context.Context) ([]marquee.User, error)
	User(ctx context.Context, id int64) (marquee.User, error)
	UserLogin(ctx context.Context, email string) (marquee.User, string, error)
	UpdateUser(ctx context.Context, id int64, c marquee.UserChange) (marquee.User, error)
	DeleteUser(ctx context.Context, id int64, allow func(old marquee.User) error) error
	CreateKey(ctx context.Context, k marquee.APIKey, hash string) (marquee.APIKey, error)
	Keys(ctx context.Context) ([]marquee.APIKey, error)
	Key(ctx context.Context, id int64) (marquee.APIKey, error)
	KeyByHash(ctx context.Context, hash string) (marquee.APIKey, error)
	RevokeKey(ctx context.Context, id int64) error
	TouchKeys(ctx context.Context, used map[int64]time.Time) error
	CreateSession(ctx context.Context, s marquee.Session) error
	Session(ctx context.Context, hash string) (marquee.Session, error)
	DeleteSession(ctx context.Context, hash string) error
	TouchSessions(ctx context.Context, seen map[string]time.Time) error
	TrimSessions(ctx context.Context, now, idleBefore, failuresBefore time.Time) (int64, error)
	LoginFailures(ctx context.Context, subjects []string, since time.Time) ([]int, time.Time, error)
	AddLoginFailure(ctx context.Context, subjects []string, at, before time.Time) error
	ClearLoginFailures(ctx context.Context, subject string) error
	AddAudit(ctx context.Context, e marquee.AuditEntry) error
	AuditLog(ctx context.Context, f marquee.AuditFilter) ([]marquee.AuditEntry, int, error)
	TrimAudit(ctx context.Context, before time.Time) (int64, error)

	// The changelog (feed.Source).
	LastSeq(ctx context.Context) (int64, error)
	FirstSeq(ctx context.Context) (int64, error)
	Changes(ctx context.Context, after int64, limit int) ([]marquee.Change, error)
	TrimChangelog(ctx context.Context, before time.Time) (int64, error)

	// Reports (reports.Store, reports.Reader), their roll-up and rebuild.
	AddReports(ctx context.Context, b *reportrow.Batch) error
	ReportFiles(ctx context.Context, files []string) (map[string]reportrow.FileMark, error)
	ReportSums(ctx context.Context, q reportrow.SumQuery, daily bool) ([]reportrow.Sum, error)
	ReportTop(ctx context.Context, q reportrow.SumQuery, daily bool, metric string, limit int) ([]reportrow.Sum, error)
	ReportTags(ctx context.Context, q reportrow.SumQuery, daily bool, metric string, limit int) ([]reportrow.Sum, error)
	ReportReach(ctx context.Context, entity string, id, from, to int64) ([]reportrow.Reach, error)
	CubeSums(ctx context.Context, q reportrow.CubeQuery) ([]reportrow.CubeRow, error)
	RequestSums(ctx context.Context, q reportrow.RequestQuery) ([]reportrow.RequestRow, error)
	// What names the rows of reports read from ClickHouse (clickhouse.Catalog).
	EntityNames(ctx context.Context, entity string, ids []int64) (map[int64]string, error)
	LinkTags(ctx context.Context, ids []int64) (map[int64][]string, error)
	RollUpReports(ctx context.Context, cutoff int64) (int64, error)
	// Samples of requests, for forecasts (AddReports adds them).
	RequestSamples(ctx context.Context, from, to int64, placements []int64) ([]reportrow.RequestSample, error)
	DeleteRequestSamples(ctx context.Context, before int64) (int64, error)
	// Header bidding's counts (AddReports adds them).
	BidSums(ctx context.Context, q reportrow.BidQuery) ([]reportrow.BidRow, error)

	// Saved reports and their schedules' delivery log (web, reportmail).
	CreateSavedReport(ctx context.Context, r marquee.SavedReport) (marquee.SavedReport, error)
	SavedReport(ctx context.Context, id int64) (marquee.SavedReport, error)
	SavedReports(ctx context.Context) ([]marquee.SavedReport, error)
	ReplaceSavedReport(ctx context.Context, id int64, r marquee.SavedReport) (marquee.SavedReport, error)
	DeleteSavedReport(ctx context.Context, id int64) error
	ClaimDelivery(ctx context.Context, id int64, from, to time.Time, recipients []string) (marquee.ReportDelivery, bool, error)
	ClaimRetry(ctx context.Context, id int64) (bool, error)
	FinishDelivery(ctx context.Context, id int64, status, errText string, next, sentAt *time.Time) error
	DueRetries(ctx context.Context, now time.Time) ([]marquee.ReportDelivery, error)
	AbandonSending(ctx context.Context, before time.Time) (int64, error)
	ReportDeliveries(ctx context.Context, id int64, limit int) ([]marquee.ReportDelivery, error)
	ReplaceReports(ctx context.Context, b *reportrow.Batch, from, to int64) error

	// Conversions counted once per advertiser and dedupe key (web).
	AddConversion(ctx context.Context, c marquee.Conversion) (bool, error)
	RemoveConversion(ctx context.Context, advertiser int64, dedupe string) error

	// InsertAds and InsertLinks store many rows in one transaction (for
	// seeding) with a single "reload" changelog entry, calling progress
	// after each row; the rows are sqltx.BulkAdRow's and BulkLinkRow's
	// (a bulk-inserted ad has no url).
	InsertAds(ctx context.Context, ins []marquee.AdInput, progress func()) error
	InsertLinks(ctx context.Context, ins []marquee.LinkInput, progress func()) error

	// Ping answers whether the database does (/readyz); Full whether
	// the last write failed for lack of disk space; StoreID is the
	// database's random id (what a saved index is tied to).
	Ping(ctx context.Context) error
	Full() bool
	StoreID(ctx context.Context) (string, error)
	Close() error
}
