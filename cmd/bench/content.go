package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage"
)

const menuBenchClients = 8

// runContentBench reads the storefront's main-menu of 200 items (products,
// categories and links, three levels) through the API against a bare
// handler that reads the same row and encodes its stored items unresolved
// (decisions §22's measure), in alternating rounds A B A B; then the
// collection measures of decisions §21 (runCollectionBench).
func runContentBench(ctx context.Context, dbURL string, duration time.Duration) (string, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	loadBefore := loadAverage()
	storeID, subdomain, err := seedMenuStore(ctx, db)
	if err != nil {
		return "", err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	realURL, stopReal, err := serve(api.NewServer(api.Config{StorefrontRateLimitPerMinute: 1 << 30}, db.DB, nil, nil, quiet))
	if err != nil {
		return "", err
	}
	defer stopReal()
	bareURL, stopBare, err := serve(bareMenuHandler(db, storeID))
	if err != nil {
		return "", err
	}
	defer stopBare()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: menuBenchClients * 2}}
	realReq := func() (*http.Request, error) {
		return http.NewRequest(http.MethodGet, realURL+"/api/v1/storefront/"+subdomain+"/menus/main-menu", nil)
	}
	bareReq := func() (*http.Request, error) { return http.NewRequest(http.MethodGet, bareURL+"/main-menu", nil) }

	var real, bare result
	for range 2 {
		for _, run := range []struct {
			into *result
			mk   func() (*http.Request, error)
		}{{&bare, bareReq}, {&real, realReq}} {
			r, err := closedLoop(client, run.mk, menuBenchClients, duration/4)
			if err != nil {
				return "", err
			}
			run.into.requests += r.requests
			run.into.elapsed += r.elapsed
			run.into.latencies = append(run.into.latencies, r.latencies...)
		}
	}
	collections, err := runCollectionBench(ctx, db, duration)
	if err != nil {
		return "", err
	}
	ratio := real.rps() / bare.rps()
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s), one machine, Postgres with fsync off (the test cluster; these are reads, which fsync\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel())
	fmt.Fprintf(&b, "does not touch: a production database adds a network round trip to both paths alike). The store's main-menu holds 200 items\n")
	fmt.Fprintf(&b, "over three levels (20 categories with 9 children each: 120 products, 20 of them drafts, which the storefront leaves out, and 60 links).\n")
	fmt.Fprintf(&b, "%d clients, rounds of %s in the order bare, real, bare, real.\n\n", menuBenchClients, duration/4)
	fmt.Fprintf(&b, "| `GET …/menus/main-menu` | requests/s | p50 | p99 |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| bare: the row's stored items, encoded unresolved | %.0f | %s | %s |\n", bare.rps(), ms(bare.percentile(0.5)), ms(bare.percentile(0.99)))
	fmt.Fprintf(&b, "| real: `GET /api/v1/storefront/{subdomain}/menus/main-menu` (limiter, then one round trip: the store by subdomain, the menu (its items only when their revision is not the one the process keeps decoded) and every target its items name, by kind through menu_item_targets; URLs, drafts left out, `text`) | %.0f | %s | %s |\n\n",
		real.rps(), ms(real.percentile(0.5)), ms(real.percentile(0.99)))
	fmt.Fprintf(&b, "**Real / bare: %.2f** (goal ≥ 0.6: %s).\n", ratio, verdict(ratio >= 0.6))
	writeCollectionReport(&b, collections, duration, loadBefore, loadAverage())
	return b.String(), nil
}

// seedMenuStore writes a store whose main-menu has 200 items.
func seedMenuStore(ctx context.Context, db *database) (uuid.UUID, string, error) {
	subdomain := "menu-bench"
	user := storage.User{Email: subdomain + "@example.com", PasswordHash: "x", Name: "Bench"}
	store := storage.Store{Name: subdomain, Subdomain: subdomain, Currency: "EGP", DefaultLanguage: "ar"}
	err := db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		var items []storage.MenuItem
		for c := range 20 {
			cat := storage.Category{StoreID: store.ID, Name: fmt.Sprintf("تصنيف %d", c), Position: c}
			if err := tx.CreateCategory(ctx, &cat); err != nil {
				return err
			}
			parent := storage.MenuItem{Title: storage.Bilingual{AR: cat.Name, EN: fmt.Sprintf("Category %d", c)}, Type: storage.MenuItemCategory,
				ResourceID: &cat.ID}
			for k := range 9 {
				if k < 6 {
					p := storage.Product{StoreID: store.ID, Name: fmt.Sprintf("منتج %d-%d", c, k), Price: 10000}
					if k == 5 {
						p.Status = "draft"
					}
					if err := tx.CreateProduct(ctx, &p); err != nil {
						return err
					}
					parent.Items = append(parent.Items, storage.MenuItem{Title: storage.Bilingual{AR: p.Name}, Type: storage.MenuItemProduct, ResourceID: &p.ID})
					continue
				}
				parent.Items = append(parent.Items, storage.MenuItem{Title: storage.Bilingual{AR: "رابط", EN: "Link"}, Type: storage.MenuItemURL,
					URL: fmt.Sprintf("/pages/link-%d-%d", c, k)})
			}
			items = append(items, parent)
		}
		menus, _, err := tx.FindMenus(ctx, store.ID, storage.Page{Page: 1, Limit: 10})
		if err != nil {
			return err
		}
		for _, m := range menus {
			if m.Handle == "main-menu" {
				_, _, err = tx.UpdateMenu(ctx, store.ID, m.ID, m.ETag(), storage.MenuChange{Items: &items})
				return err
			}
		}
		return fmt.Errorf("no main-menu")
	})
	return store.ID, subdomain, err
}

// bareMenuHandler reads a menu's row and encodes its stored items as they
// are: no target lookups, no URLs.
func bareMenuHandler(db *database, storeID uuid.UUID) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var handle string
		var title, items json.RawMessage
		if err := db.Pool.QueryRow(r.Context(), `SELECT handle, title, items FROM menus WHERE store_id = $1 AND handle = $2`,
			storeID, strings.TrimPrefix(r.URL.Path, "/")).Scan(&handle, &title, &items); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "data": map[string]any{"handle": handle, "title": title, "items": items}})
	})
}
