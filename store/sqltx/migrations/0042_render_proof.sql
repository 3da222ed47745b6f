-- Render proofs (docs/ivt.md#render-proofs): a placement that asks for
-- one bills no hit of the tag without it (1: asks; 0: does not), and
-- reports count those hits as invalid traffic of their own reason.
ALTER TABLE placements ADD COLUMN render_proof integer NOT NULL DEFAULT 0;
ALTER TABLE report_requests ADD COLUMN i_norenderproof bigint NOT NULL DEFAULT 0;
ALTER TABLE report_requests_daily ADD COLUMN i_norenderproof bigint NOT NULL DEFAULT 0;
