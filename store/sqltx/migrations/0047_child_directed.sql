-- COPPA (docs/privacy.md#activities): a site or a placement directed to
-- children (1): its decisions have no user, no personalisation and send
-- nothing of the user.
ALTER TABLE sites ADD COLUMN child_directed integer NOT NULL DEFAULT 0;
ALTER TABLE placements ADD COLUMN child_directed integer NOT NULL DEFAULT 0;
