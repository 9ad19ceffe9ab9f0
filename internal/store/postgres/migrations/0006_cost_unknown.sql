-- A cost is unknown when some of its usage was on a model with no price:
-- then cost_usd holds what the priced part cost, and cost_unknown is true,
-- so that a restart still reads "unknown" and never a false $0. Rows from
-- before this migration were priced, or counted as 0: they stay known.
ALTER TABLE sessions
    ADD COLUMN cost_unknown BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN model        TEXT    NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN cost_unknown BOOLEAN NOT NULL DEFAULT false;
