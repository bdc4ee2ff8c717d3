package request

import "github.com/merchantsvc/svc/storage"

// AllScopes is the 18 scopes a token may carry.
var AllScopes = func() []string {
	scopes := make([]string, 0, 2*len(storage.ScopeDomains))
	for _, d := range storage.ScopeDomains {
		scopes = append(scopes, d+":read", d+":write")
	}
	return scopes
}()
