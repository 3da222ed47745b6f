-- A video placement's ad rules (docs/api.md#vmap): its ad breaks as a JSON
-- array of {offset, ads} (NULL: none).
ALTER TABLE placements ADD COLUMN ad_breaks text;
