// Package workflows holds deterministic orchestration only: no I/O, no
// time.Now, no goroutines, no map iteration. Side effects are activities.
//
// Each workflow has a file of its own with its Input and Result (never an
// alias of a storage or activities type: these structs are history
// payloads, and a renamed storage field must not silently change one), the
// helper that derives its workflow id from ids, and the refusals it returns
// as temporal.ApplicationError types.
package workflows

import (
	"github.com/merchantsvc/svc/activities"
)

// a is the typed reference used to name activities.
var a *activities.Activities
