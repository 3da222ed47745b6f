-- Demand partners (docs/demand.md#partners): an OpenRTB buyer by its name
-- (a bidder code), its terms as a JSON document (marquee.DemandPartner
-- without name and times; its headers' values are its credentials, kept
-- here as they are sent, never answered). Times are unix ms.
CREATE TABLE demand_partners (
	name       {{str128}} NOT NULL PRIMARY KEY,
	terms      text NOT NULL,
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL
){{table}};
