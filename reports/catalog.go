package reports

import (
	"context"

	"marquee"
)

// CatalogStore is what a catalog is read from: every campaign,
// advertiser, placement and site, and ads' titles by id.
type CatalogStore interface {
	ListCampaigns(ctx context.Context, f marquee.ListFilter) ([]marquee.Campaign, int, error)
	ListAdvertisers(ctx context.Context, f marquee.ListFilter) ([]marquee.Advertiser, int, error)
	ListPlacements(ctx context.Context, f marquee.ListFilter) ([]marquee.Placement, int, error)
	ListSites(ctx context.Context) ([]marquee.Site, error)
	EntityNames(ctx context.Context, entity string, ids []int64) (map[int64]string, error)
}

// Catalogs reads from a store what reports and billing documents name
// their rows by. It keeps nothing: each catalog is read afresh.
type Catalogs struct{ st CatalogStore }

// NewCatalogs returns the catalogs of st.
func NewCatalogs(st CatalogStore) *Catalogs { return &Catalogs{st: st} }

// Catalog reads the catalog now: every campaign (whatever its state),
// advertiser and placement, the sites' revenue shares, and the titles of
// the ads a report asks for (one query a report, not one an ad).
func (c *Catalogs) Catalog(ctx context.Context) (*Catalog, error) {
	cs, err := AllCampaigns(ctx, c.st, 0)
	if err != nil {
		return nil, err
	}
	as, err := marquee.ListAll(ctx, marquee.ListFilter{}, c.st.ListAdvertisers)
	if err != nil {
		return nil, err
	}
	ps, err := marquee.ListAll(ctx, marquee.ListFilter{}, c.st.ListPlacements)
	if err != nil {
		return nil, err
	}
	sites, err := c.st.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	cat := &Catalog{Campaigns: make(map[int64]*marquee.Campaign, len(cs)), Advertisers: make(map[int64]string, len(as)),
		Placements: make(map[int64]*marquee.Placement, len(ps)), Shares: make(map[string]float64, len(sites))}
	for i := range cs {
		cat.Campaigns[cs[i].ID] = &cs[i]
	}
	for _, a := range as {
		cat.Advertisers[a.ID] = a.Name
	}
	for i := range ps {
		cat.Placements[ps[i].ID] = &ps[i]
	}
	for _, s := range sites {
		cat.Shares[s.Name] = s.RevenueShare
	}
	cat.AdTitles = func(ctx context.Context, ids []int64) (map[int64]string, error) {
		return c.st.EntityNames(ctx, marquee.EntityAd, ids)
	}
	return cat, nil
}

// CampaignLister lists campaigns a page at a time.
type CampaignLister interface {
	ListCampaigns(ctx context.Context, f marquee.ListFilter) ([]marquee.Campaign, int, error)
}

// AllCampaigns lists every campaign of advertiser (0: of every
// advertiser), whatever its state.
func AllCampaigns(ctx context.Context, st CampaignLister, advertiser int64) ([]marquee.Campaign, error) {
	return marquee.ListAll(ctx, marquee.ListFilter{Parent: advertiser}, st.ListCampaigns)
}
