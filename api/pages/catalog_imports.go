package pages

import (
	"net/http"

	"github.com/google/uuid"
)

// The imports page (issue 18): product imports with a live progress bar.
// Like every store page it reads the store's own rows on the server; what
// it changes goes through the JSON API, so its rules, scopes and
// Idempotency-Keys hold for the page too.

// ImportsPage serves GET /stores/{store_id}/imports.
func (p *Pages) ImportsPage() http.Handler {
	return p.handleStore("catalog:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		store := mp.store
		imports, err := p.db.FindRecentImports(r.Context(), store.ID, 20)
		if err != nil {
			return err
		}
		type row struct {
			ID        uuid.UUID
			Status    string
			DryRun    bool
			TotalRows int
			Started   string
		}
		rows := make([]row, 0, len(imports))
		for _, imp := range imports {
			rows = append(rows, row{imp.ID, string(imp.Status), imp.DryRun, imp.TotalRows, utcTime(imp.CreatedAt)})
		}
		p.storePage(w, mp, "catalog_imports.html", "imports", map[string]any{"Title": word(mp.lang, "imports.title"), "Imports": rows})
		return nil
	})
}
