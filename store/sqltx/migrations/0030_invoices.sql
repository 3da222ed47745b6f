-- Invoices, credit notes and publishers' statements (docs/api.md#invoices):
-- numbered documents, immutable once issued. seq is the gapless number (one
-- series for every kind); an invoice's advertiser, a statement's site ('':
-- none); body the whole document (JSON, marquee.Invoice); credited_by the
-- credit note that cancelled an invoice ('': none), the one change a row
-- takes. Periods and times are unix ms.
CREATE TABLE invoices (
	id            {{id}},
	seq           bigint NOT NULL UNIQUE,
	kind          {{str16}} NOT NULL,
	advertiser_id bigint NOT NULL,
	site          {{str255}} NOT NULL DEFAULT '',
	period_from   bigint NOT NULL,
	period_to     bigint NOT NULL,
	total_micros  bigint NOT NULL,
	credited_by   {{str32}} NOT NULL DEFAULT '',
	body          {{bigtext}} NOT NULL,
	issued_at     bigint NOT NULL
){{table}};
CREATE INDEX invoices_advertiser ON invoices (advertiser_id, period_from);
-- The last number given: the one row every issue updates, so issues take
-- turns (a row lock) and numbers have no gaps (a rolled-back issue gives
-- its number back).
CREATE TABLE invoice_seq (
	id   bigint NOT NULL PRIMARY KEY,
	last bigint NOT NULL
){{table}};
INSERT INTO invoice_seq (id, last) VALUES (1, 0);
