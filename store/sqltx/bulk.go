package sqltx

import (
	"marquee"
	"marquee/store/adrow"
)

// BulkAdColumns are the columns of ads a store's InsertAds writes, in
// the order of BulkAdRow's values. The url is empty: a bulk-inserted ad
// has no landing page, so no tracking link (CreateAd makes both).
var BulkAdColumns = []string{"title", "start_at", "end_at", "conditions", "created_at", "updated_at", "url", "title_key",
	"campaign_id", "creative", "placements", "targeting"}

// BulkAdRow is the values of in for BulkAdColumns, created and updated
// at now (Unix milliseconds), with no url whatever in.URL says. Its
// campaign and placements are not checked (seeding names ones it made).
func BulkAdRow(in marquee.AdInput, now int64) ([]any, error) {
	conds, err := adrow.Conditions(in)
	if err != nil {
		return nil, err
	}
	x, err := adrow.ExtrasOf(in)
	if err != nil {
		return nil, err
	}
	return []any{in.Title, in.StartAt.UnixMilli(), in.EndAt.UnixMilli(), conds, now, now, "", TitleKey(in.Title),
		in.CampaignID, x.Creative, x.Placements, x.Targeting}, nil
}

// BulkLinkColumns are the columns of links a store's InsertLinks writes,
// in the order of BulkLinkRow's values.
var BulkLinkColumns = []string{"domain", "code", "url", "title", "tags", "rules", "destinations", "expires_at", "max_clicks", "redirect",
	"ad_id", "created_at", "updated_at"}

// BulkLinkRow is the values of in for BulkLinkColumns, created and
// updated at now (Unix milliseconds). Its tags are not indexed (seeding
// gives none).
func BulkLinkRow(in marquee.LinkInput, now int64) ([]any, error) {
	tags, rules, dests, err := linkJSON(in)
	return []any{in.Domain, in.Code, in.URL, in.Title, tags, rules, dests, millis(in.ExpiresAt), in.MaxClicks, in.Redirect, in.AdID, now, now}, err
}
