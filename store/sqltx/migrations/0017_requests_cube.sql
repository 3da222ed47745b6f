-- Requests and fill (docs/api.md#requests-and-fill): every decision's
-- slots by placement, UTC hour, country and device type, and what became
-- of each (filled, the house ad, or why it stayed empty: one column an
-- outcome, their sum the requests). Per slot (instance) as report_hourly;
-- rolled into report_requests_daily with it.
CREATE TABLE report_requests (
	hour         bigint NOT NULL,
	placement_id bigint NOT NULL,
	country      {{str8}} NOT NULL,
	device       {{str16}} NOT NULL,
	slot         {{str255}} NOT NULL,
	o_filled bigint NOT NULL,
	o_house bigint NOT NULL,
	o_nocampaign bigint NOT NULL,
	o_wrongsize bigint NOT NULL,
	o_notrunning bigint NOT NULL,
	o_untargeted bigint NOT NULL,
	o_inrequest bigint NOT NULL,
	o_capped bigint NOT NULL,
	o_goalmet bigint NOT NULL,
	o_paced bigint NOT NULL,
	o_consent bigint NOT NULL,
	PRIMARY KEY (hour, placement_id, country, device, slot)
){{clustered}};
CREATE TABLE report_requests_daily (
	day          bigint NOT NULL,
	placement_id bigint NOT NULL,
	country      {{str8}} NOT NULL,
	device       {{str16}} NOT NULL,
	o_filled bigint NOT NULL,
	o_house bigint NOT NULL,
	o_nocampaign bigint NOT NULL,
	o_wrongsize bigint NOT NULL,
	o_notrunning bigint NOT NULL,
	o_untargeted bigint NOT NULL,
	o_inrequest bigint NOT NULL,
	o_capped bigint NOT NULL,
	o_goalmet bigint NOT NULL,
	o_paced bigint NOT NULL,
	o_consent bigint NOT NULL,
	PRIMARY KEY (day, placement_id, country, device)
){{clustered}};
-- Reports by several dimensions (docs/api.md#reports-by-several-dimensions):
-- each event counts once in each grain, a UTC day per row, per slot.
-- report_cube: by ad, campaign and placement (0: none), the rows a report
-- by advertiser, campaign, ad, placement or site reads.
CREATE TABLE report_cube (
	day          bigint NOT NULL,
	campaign_id  bigint NOT NULL,
	placement_id bigint NOT NULL,
	ad_id        bigint NOT NULL,
	bot          integer NOT NULL,
	slot         {{str255}} NOT NULL,
	impressions bigint NOT NULL,
	clicks bigint NOT NULL,
	conversions bigint NOT NULL,
	measured bigint NOT NULL,
	views bigint NOT NULL,
	starts bigint NOT NULL,
	first_quartiles bigint NOT NULL,
	midpoints bigint NOT NULL,
	third_quartiles bigint NOT NULL,
	completes bigint NOT NULL,
	unverified_impressions bigint NOT NULL,
	unverified_clicks bigint NOT NULL,
	unverified_conversions bigint NOT NULL,
	unverified_views bigint NOT NULL,
	video_measured bigint NOT NULL,
	video_views bigint NOT NULL,
	PRIMARY KEY (day, campaign_id, placement_id, ad_id, bot, slot)
){{clustered}};
-- report_cube_cp: the same without the ad (ad_id 0): what a report that
-- is not by ad reads, a campaign's ads' rows summed (fewer rows to read).
CREATE TABLE report_cube_cp (
	day          bigint NOT NULL,
	campaign_id  bigint NOT NULL,
	placement_id bigint NOT NULL,
	ad_id        bigint NOT NULL,
	bot          integer NOT NULL,
	slot         {{str255}} NOT NULL,
	impressions bigint NOT NULL,
	clicks bigint NOT NULL,
	conversions bigint NOT NULL,
	measured bigint NOT NULL,
	views bigint NOT NULL,
	starts bigint NOT NULL,
	first_quartiles bigint NOT NULL,
	midpoints bigint NOT NULL,
	third_quartiles bigint NOT NULL,
	completes bigint NOT NULL,
	unverified_impressions bigint NOT NULL,
	unverified_clicks bigint NOT NULL,
	unverified_conversions bigint NOT NULL,
	unverified_views bigint NOT NULL,
	video_measured bigint NOT NULL,
	video_views bigint NOT NULL,
	PRIMARY KEY (day, campaign_id, placement_id, ad_id, bot, slot)
){{clustered}};
-- report_cube_geo: and by country and device type.
CREATE TABLE report_cube_geo (
	day          bigint NOT NULL,
	campaign_id  bigint NOT NULL,
	placement_id bigint NOT NULL,
	ad_id        bigint NOT NULL,
	country      {{str8}} NOT NULL,
	device       {{str16}} NOT NULL,
	bot          integer NOT NULL,
	slot         {{str255}} NOT NULL,
	impressions bigint NOT NULL,
	clicks bigint NOT NULL,
	conversions bigint NOT NULL,
	measured bigint NOT NULL,
	views bigint NOT NULL,
	starts bigint NOT NULL,
	first_quartiles bigint NOT NULL,
	midpoints bigint NOT NULL,
	third_quartiles bigint NOT NULL,
	completes bigint NOT NULL,
	unverified_impressions bigint NOT NULL,
	unverified_clicks bigint NOT NULL,
	unverified_conversions bigint NOT NULL,
	unverified_views bigint NOT NULL,
	video_measured bigint NOT NULL,
	video_views bigint NOT NULL,
	PRIMARY KEY (day, campaign_id, placement_id, ad_id, country, device, bot, slot)
){{clustered}};
-- report_cube_kv: and by one report key's value (-report-keys).
CREATE TABLE report_cube_kv (
	day          bigint NOT NULL,
	kv_key       {{str32}} NOT NULL,
	campaign_id  bigint NOT NULL,
	placement_id bigint NOT NULL,
	ad_id        bigint NOT NULL,
	kv_value     {{str255}} NOT NULL,
	bot          integer NOT NULL,
	slot         {{str255}} NOT NULL,
	impressions bigint NOT NULL,
	clicks bigint NOT NULL,
	conversions bigint NOT NULL,
	measured bigint NOT NULL,
	views bigint NOT NULL,
	starts bigint NOT NULL,
	first_quartiles bigint NOT NULL,
	midpoints bigint NOT NULL,
	third_quartiles bigint NOT NULL,
	completes bigint NOT NULL,
	unverified_impressions bigint NOT NULL,
	unverified_clicks bigint NOT NULL,
	unverified_conversions bigint NOT NULL,
	unverified_views bigint NOT NULL,
	video_measured bigint NOT NULL,
	video_views bigint NOT NULL,
	PRIMARY KEY (day, kv_key, campaign_id, placement_id, ad_id, kv_value, bot, slot)
){{clustered}};
