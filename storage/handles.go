package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage/handle"
)

// handleTables are the tables whose handles freeHandles numbers: each has a
// handle unique per store (decisions part three).
var handleTables = map[string]bool{"products": true, "collections": true}

// freeHandles answers, for each stem, a handle of the store's table that no
// row has and no earlier stem of the call was given: the stem itself, else
// stem-2, stem-3 … (cut to handle.MaxLength), as Shopify numbers them. One
// query reads every handle the stems could collide with, so a batch of a
// thousand products costs one round trip. A row written meanwhile by another
// transaction is the caller's unique violation.
func (tx *Tx) freeHandles(ctx context.Context, table string, storeID uuid.UUID, stems []string) ([]string, error) {
	if !handleTables[table] {
		return nil, fmt.Errorf("free handles: no handles in %q", table)
	}
	exact, prefixes := make([]string, len(stems)), make([]string, len(stems))
	for i, stem := range stems {
		exact[i] = stem
		// A numbered handle starts with the stem, cut when long: read
		// every handle that starts with what any cut leaves.
		r := []rune(stem)
		r = r[:min(len(r), handle.MaxLength-8)]
		prefixes[i] = likeEscaper.Replace(string(r)) + "%"
	}
	rows, err := tx.tx.Query(ctx, `SELECT handle FROM `+table+` WHERE store_id = $1 AND (handle = ANY ($2) OR handle LIKE ANY ($3))`,
		storeID, exact, prefixes)
	if err != nil {
		return nil, fmt.Errorf("find free handles: %w", err)
	}
	taken := map[string]bool{}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find free handles: %w", err)
		}
		taken[h] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find free handles: %w", err)
	}
	out := make([]string, len(stems))
	for i, stem := range stems {
		for n := 1; ; n++ {
			if h := numbered(stem, n); !taken[h] {
				out[i], taken[h] = h, true
				break
			}
		}
	}
	return out, nil
}

// numbered is stem with -n after it (n > 1), cut so that it stays within
// handle.MaxLength characters.
func numbered(stem string, n int) string {
	if n <= 1 {
		return stem
	}
	suffix := "-" + strconv.Itoa(n)
	r := []rune(stem)
	if len(r)+len(suffix) > handle.MaxLength {
		r = r[:handle.MaxLength-len(suffix)]
	}
	return string(r) + suffix
}

// likeEscaper escapes LIKE's wildcards (a handle may hold '_').
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
