-- +goose Up
-- Rate-limit counts shared by every API replica (README "Rate limits and
-- several API instances"): one row per limiter, key and 60 s window. The
-- table is UNLOGGED: counts need no crash safety (a crash forgets at most a
-- minute of them) and skip the WAL on every upsert.
CREATE UNLOGGED TABLE rate_limit_counts (
    limiter      text NOT NULL,
    key          text NOT NULL,
    window_start timestamptz NOT NULL,
    count        int NOT NULL,
    PRIMARY KEY (limiter, key, window_start)
);

-- +goose Down
DROP TABLE rate_limit_counts;
