package site

import (
	"strconv"
	"sync"
	"time"
)

// The page cache (decisions §23): a rendered page is kept under (store,
// path with its query, language, published document, content version).
// The content version moves in the transaction of every change that shows
// on a page (migration 0067), so a change is served on the next request;
// an entry also ends after cacheTTL, as a shared cache's max-age does, so
// what time alone changes (a page scheduled to appear) shows within it.
// Only publicly cacheable pages go in: no cart, checkout, account or order
// page, and nothing with a per-visitor token.

const (
	maxCachedPages = 4096
	cacheTTL       = 60 * time.Second
)

// cached is a rendered page and the headers that go with it.
type cached struct {
	body   []byte
	etag   string
	csp    string
	lang   string
	status int
	at     time.Time
}

// pageCache is a bounded map; when full, the oldest entries go first.
type pageCache struct {
	mu      sync.Mutex
	entries map[string]*cached
	order   []string
	max     int
	ttl     time.Duration
}

func newPageCache(maxEntries int, ttl time.Duration) *pageCache {
	return &pageCache{entries: map[string]*cached{}, max: maxEntries, ttl: ttl}
}

func (c *pageCache) get(key string) (*cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || time.Since(e.at) > c.ttl {
		return nil, false
	}
	return e, true
}

func (c *pageCache) put(key string, e *cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		c.order = append(c.order, key)
	}
	c.entries[key] = e
	for len(c.order) > c.max {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
}

// cacheKey is a request's key: a new content version or publish makes
// every older entry of the store unreachable (they age out).
func cacheKey(req *request) string {
	return req.store.ID.String() + "|" + strconv.FormatInt(req.state.ContentVersion, 10) + "|" +
		strconv.FormatInt(req.state.PublishedAt.UnixNano(), 10) + "|" + req.state.PublishedThemeID + "|" + req.lang + "|" +
		req.rootPath + "|" + req.path + "?" + req.r.URL.RawQuery
}
