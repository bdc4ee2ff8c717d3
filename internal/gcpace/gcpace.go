// Package gcpace sets how often the garbage collector of the service's
// processes runs.
package gcpace

import (
	"os"
	"runtime/debug"
)

// Percent is the GOGC the service's processes run with unless their
// environment sets GOGC: the heap grows to three times what is live
// before a collection, instead of Go's default of twice. Under the mixed
// load the collector took about 8% of the server's CPU at the default
// (docs/benchmarks.md); the price is a larger heap, which GOMEMLIMIT
// bounds where memory is tight (docs/operations.md).
const Percent = 200

// Apply sets Percent unless the environment sets GOGC.
func Apply() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
}
