package main

import "testing"

// make dev prints where the stores' websites are: under the API in
// development, on the storefront domain when one is set.
func TestStorefrontAddress(t *testing.T) {
	if got := storefrontAddress(Config{BaseURL: "http://localhost:8080"}); got != "http://localhost:8080/s/{subdomain}" {
		t.Fatalf("without a domain: %s", got)
	}
	if got := storefrontAddress(Config{BaseURL: "http://localhost:8080", StorefrontDomain: "shops.example"}); got != "https://{subdomain}.shops.example" {
		t.Fatalf("with a domain: %s", got)
	}
}
