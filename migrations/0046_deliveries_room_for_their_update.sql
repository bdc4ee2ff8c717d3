-- +goose Up
-- A delivery is inserted once and updated once by its first attempt, and a
-- chunk of first attempts updates many deliveries of the same pages in one
-- statement. A page can only reclaim a dead version once no transaction
-- needs it, so within that statement each row's new version needs room of
-- its own on the page, and it is a little larger than the old one (the
-- completion time, the response code, the status): a bit more than half
-- of the page, whatever the size of the rows. At 80 (migration 0039) about
-- two rows in three of a page moved off it, and their updates wrote all
-- four of the table's indexes again (docs/benchmarks.md, sixth pass). It
-- applies to pages written from now.
ALTER TABLE webhook_deliveries SET (fillfactor = 45);

-- +goose Down
ALTER TABLE webhook_deliveries SET (fillfactor = 80);
