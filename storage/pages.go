package storage

import (
	"context"
	"fmt"
	"slices"

	sq "github.com/Masterminds/squirrel"
	"github.com/jackc/pgx/v5"
)

// Page is one page of a list: 1-based, Limit rows long.
type Page struct {
	Page  int
	Limit int
}

// Offset is the row offset of the page.
func (p Page) Offset() uint64 { return uint64((p.Page - 1) * p.Limit) }

// listQuery is a list's query in parts: the columns of one record, the FROM
// and WHERE clauses with their arguments, and an order that ends in a unique
// column so that pages never overlap or skip.
type listQuery struct {
	columns string
	from    string
	args    []any
	orderBy string
}

// dollarSQL renders a WHERE condition with $n placeholders for a listQuery.
func dollarSQL(where sq.Sqlizer) (string, []any, error) {
	sql, args, err := where.ToSql()
	if err != nil {
		return "", nil, err
	}
	sql, err = sq.Dollar.ReplacePlaceholders(sql)
	return sql, args, err
}

// findPage reads limit rows of a list from offset and the total that match, in one round
// trip. The one count rule: total counts every row the filter matches,
// whatever page was asked for, so a page past the end answers the true
// total with no items.
func findPage[T any](ctx context.Context, r reader, what string, q listQuery, limit, offset int, scan pgx.RowToFunc[T]) ([]T, int, error) {
	var (
		items []T
		total int
	)
	n := len(q.args)
	batch := &pgx.Batch{}
	batch.Queue(fmt.Sprintf("SELECT %s %s ORDER BY %s LIMIT $%d OFFSET $%d", q.columns, q.from, q.orderBy, n+1, n+2),
		append(slices.Clip(q.args), limit, offset)...).Query(func(rows pgx.Rows) error {
		var err error
		items, err = pgx.CollectRows(rows, scan)
		return err
	})
	batch.Queue("SELECT count(*) "+q.from, q.args...).QueryRow(func(row pgx.Row) error { return row.Scan(&total) })
	if err := r.q.SendBatch(ctx, batch).Close(); err != nil {
		return nil, 0, fmt.Errorf("find %s: %w", what, err)
	}
	return items, total, nil
}
