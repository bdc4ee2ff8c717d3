-- +goose Up
-- Each rate-limit count row names the transaction that last wrote it, so a
-- replica's sync reads only the rows written since its previous sync's
-- snapshot (pg_visible_in_snapshot) instead of every row of the window for
-- every key in use (decisions, "Rate-limit syncs read what changed"). The
-- index finds them: rows written before that snapshot's xmin are skipped
-- without a visit.
ALTER TABLE rate_limit_counts ADD COLUMN writer xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX rate_limit_counts_writer_idx ON rate_limit_counts (limiter, writer);

-- +goose Down
DROP INDEX rate_limit_counts_writer_idx;
ALTER TABLE rate_limit_counts DROP COLUMN writer;
