package api

// scopeDomains are the domains of spec §5.1; each has :read and :write.
var scopeDomains = []string{"catalog", "media", "orders", "customers", "analytics", "marketing", "themes", "risk", "settings"}

// allScopes is the 18 scopes a token may carry.
var allScopes = func() []string {
	scopes := make([]string, 0, 2*len(scopeDomains))
	for _, d := range scopeDomains {
		scopes = append(scopes, d+":read", d+":write")
	}
	return scopes
}()
