-- Header bidding's reports (docs/api.md#header-bidding): by UTC hour,
-- placement and bidder, the bids decisions weighed and won (counted at
-- the decision), and the verified impressions the wins rendered and what
-- they earned in nano-units of the currency (counted from the events).
-- Per slot (instance), as report_requests.
CREATE TABLE report_bids (
	hour         bigint NOT NULL,
	placement_id bigint NOT NULL,
	bidder       {{str64}} NOT NULL,
	slot         {{str255}} NOT NULL,
	bids         bigint NOT NULL,
	wins         bigint NOT NULL,
	impressions  bigint NOT NULL,
	revenue      bigint NOT NULL,
	PRIMARY KEY (hour, placement_id, bidder, slot)
){{clustered}};
