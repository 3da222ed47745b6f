-- Forecasts (docs/api.md#forecasts): each instance's sample of each UTC
-- hour's requests of a placement (reports.Samples: at most -forecast-sample
-- requests, their viewer's attributes but never an address or user key),
-- the requests it saw, and the sample as a JSON array. Kept 8 weeks
-- (reports.SampleRetention), deleted by the hourly roll-up.
CREATE TABLE request_samples (
	hour         bigint NOT NULL,
	placement_id bigint NOT NULL,
	slot         {{str255}} NOT NULL,
	offered      bigint NOT NULL,
	doc          {{bigtext}} NOT NULL,
	PRIMARY KEY (hour, placement_id, slot)
){{clustered}};
