package main

import (
	"testing"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/workflows"
)

// TestMain gives the binary's in-process Temporal server the search
// attributes the service's workflows carry.
func TestMain(m *testing.M) {
	testenv.SearchAttributes = workflows.SearchAttributeTypes
	testenv.Main(m)
}
