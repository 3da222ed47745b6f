-- Advertisers, campaigns and placements (docs/api.md#campaigns), and what
-- ads gained with them. Times are unix milliseconds.
-- active_name is an active advertiser's name and NULL once it is
-- archived: unique, so that two active advertisers never share a name
-- while an archived one frees its name (every database lets NULLs repeat
-- in a unique index).
CREATE TABLE advertisers (
	id          {{id}},
	name        text NOT NULL,
	active_name {{str200}} NULL UNIQUE,
	notes       text NOT NULL,
	state       {{str16}} NOT NULL,
	created_at  bigint NOT NULL,
	updated_at  bigint NOT NULL
){{table}};
-- settings: a JSON document of the goal, pacing, frequency cap, price,
-- conditions and keywords (marquee.CampaignSettings).
CREATE TABLE campaigns (
	id            {{id}},
	advertiser_id bigint NOT NULL,
	name          text NOT NULL,
	state         {{str16}} NOT NULL,
	start_at      bigint NOT NULL,
	end_at        bigint NOT NULL,
	priority      {{str16}} NOT NULL,
	weight        integer NOT NULL,
	settings      {{bigtext}} NOT NULL,
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL
){{table}};
CREATE INDEX campaigns_advertiser ON campaigns (advertiser_id);
-- sizes and types: JSON arrays.
CREATE TABLE placements (
	id            {{id}},
	name          {{str64}} NOT NULL UNIQUE,
	site          text NOT NULL,
	sizes         text NOT NULL,
	types         text NOT NULL,
	default_ad_id bigint NOT NULL DEFAULT 0,
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL
){{table}};
-- An ad's campaign (0: none), creative (a JSON object; NULL: none) and
-- the placements it is limited to (a JSON array; '': any).
ALTER TABLE ads ADD COLUMN campaign_id bigint NOT NULL DEFAULT 0;
ALTER TABLE ads ADD COLUMN creative {{bigtext}} NULL;
ALTER TABLE ads ADD COLUMN placements {{str2048}} NOT NULL DEFAULT '';
CREATE INDEX ads_campaign ON ads (campaign_id);
