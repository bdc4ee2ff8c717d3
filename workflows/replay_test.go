package workflows_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/worker"
	"github.com/merchantsvc/svc/workflows"
)

// histories are the recorded histories under testdata/histories: current/
// from this code (make record-histories), and one folder per older commit
// whose running workflows this code must still be able to finish.
func histories(t *testing.T) []string {
	files, err := filepath.Glob("testdata/histories/*/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// Every recorded history replays on today's workflows without a
// non-determinism error: a deploy never breaks the workflows it finds running.
func TestReplayRecordedHistories(t *testing.T) {
	replayer := sdkworker.NewWorkflowReplayer()
	worker.RegisterWorkflows(replayer)
	for _, file := range histories(t) {
		t.Run(strings.TrimPrefix(file, "testdata/histories/"), func(t *testing.T) {
			require.NoError(t, replayer.ReplayWorkflowHistoryFromJSONFile(nil, file))
		})
	}
}

// Every workflow the worker registers has a history recorded from this code,
// so a new workflow cannot skip the replay check.
func TestEveryWorkflowHasARecordedHistory(t *testing.T) {
	var names registeredNames
	worker.RegisterWorkflows(&names)
	var recorded []string
	for _, file := range histories(t) {
		if filepath.Base(filepath.Dir(file)) == "current" {
			recorded = append(recorded, strings.TrimSuffix(filepath.Base(file), ".json"))
		}
	}
	slices.Sort(names)
	slices.Sort(recorded)
	require.Equal(t, []string(names), recorded)
}

// registeredNames records the names of the workflows registered on it, as
// the SDK names them: the function's own name.
type registeredNames []string

func (n *registeredNames) RegisterWorkflow(w any) {
	full := runtime.FuncForPC(reflect.ValueOf(w).Pointer()).Name()
	*n = append(*n, full[strings.LastIndex(full, ".")+1:])
}

// A change to a workflow's commands without a GetVersion guard fails the
// replay tests: each deliberately broken OrderPlaced below is refused on the
// histories it would corrupt, and today's OrderPlaced is not.
func TestReplayRefusesNonDeterministicChanges(t *testing.T) {
	for name, tc := range map[string]struct {
		workflow any
		history  string
	}{
		"side effects reordered":              {reorderedOrderPlaced, "testdata/histories/5b16dac/OrderPlaced.json"},
		"parallel steps without GetVersion":   {unguardedOrderPlaced, "testdata/histories/46dc7df/OrderPlaced.json"},
		"rollup dropped without GetVersion":   {rolluplessOrderPlaced, "testdata/histories/5b16dac/OrderPlaced.json"},
		"local without GetVersion":            {unguardedLocalOrderPlaced, "testdata/histories/41a9d6d/OrderPlaced.json"},
		"one activity whatever the shape":     {oneActivityOrderPlaced, "testdata/histories/df20ba2/OrderPlaced.json"},
		"three activities whatever the shape": {threeLocalOrderPlaced, "testdata/histories/current/OrderPlaced.json"},
	} {
		t.Run(name, func(t *testing.T) {
			broken := sdkworker.NewWorkflowReplayer()
			broken.RegisterWorkflowWithOptions(tc.workflow, workflow.RegisterOptions{Name: "OrderPlaced"})
			err := broken.ReplayWorkflowHistoryFromJSONFile(nil, tc.history)
			require.ErrorContains(t, err, "TMPRL1100", "the SDK's non-determinism error")

			today := sdkworker.NewWorkflowReplayer()
			today.RegisterWorkflow(workflows.OrderPlaced)
			require.NoError(t, today.ReplayWorkflowHistoryFromJSONFile(nil, tc.history))
		})
	}
}

var sideEffects = workflow.ActivityOptions{StartToCloseTimeout: time.Minute}

// reorderedOrderPlaced runs the side effects in another order.
func reorderedOrderPlaced(ctx workflow.Context, in workflows.OrderPlacedInput) (workflows.OrderPlacedResult, error) {
	ctx = workflow.WithActivityOptions(ctx, sideEffects)
	var acts *activities.Activities
	order := activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}
	workflow.GetVersion(ctx, "side-effects-in-parallel", workflow.DefaultVersion, 1)
	for _, fn := range []any{acts.RecordOrderRollup, acts.CreateOrderShipment, acts.SendChatConfirmation, acts.SendOrderEmail} {
		if err := workflow.ExecuteActivity(ctx, fn, order).Get(ctx, nil); err != nil {
			return workflows.OrderPlacedResult{}, err
		}
	}
	return workflows.OrderPlacedResult{}, nil
}

// unguardedOrderPlaced schedules all four side effects at once with no
// GetVersion: what OrderPlaced would be had the change shipped unguarded.
func unguardedOrderPlaced(ctx workflow.Context, in workflows.OrderPlacedInput) (workflows.OrderPlacedResult, error) {
	ctx = workflow.WithActivityOptions(ctx, sideEffects)
	var acts *activities.Activities
	order := activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}
	return sideBySide(ctx, workflow.ExecuteActivity, order, acts.SendOrderEmail, acts.SendChatConfirmation, acts.CreateOrderShipment, acts.RecordOrderRollup)
}

// rolluplessOrderPlaced drops the rollup step (analytics moved into the
// order's transaction, §17) with no GetVersion guard: a workflow started
// before the change would lose the activity its history scheduled.
func rolluplessOrderPlaced(ctx workflow.Context, in workflows.OrderPlacedInput) (workflows.OrderPlacedResult, error) {
	ctx = workflow.WithActivityOptions(ctx, sideEffects)
	var acts *activities.Activities
	order := activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}
	workflow.GetVersion(ctx, "side-effects-in-parallel", workflow.DefaultVersion, 1)
	return sideBySide(ctx, workflow.ExecuteActivity, order, acts.SendOrderEmail, acts.SendChatConfirmation, acts.CreateOrderShipment)
}

// unguardedLocalOrderPlaced runs the three side effects as local
// activities with no GetVersion of its own: a workflow started before the
// change would find markers where its history scheduled activities.
func unguardedLocalOrderPlaced(ctx workflow.Context, in workflows.OrderPlacedInput) (workflows.OrderPlacedResult, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	var acts *activities.Activities
	order := activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}
	workflow.GetVersion(ctx, "rollup-in-order-transaction", workflow.DefaultVersion, 1)
	workflow.GetVersion(ctx, "side-effects-in-parallel", workflow.DefaultVersion, 1)
	return sideBySide(ctx, workflow.ExecuteLocalActivity, order, acts.SendOrderEmail, acts.SendChatConfirmation, acts.CreateOrderShipment)
}

// An order-placed workflow started in today's shape records no version
// marker and upserts no search attribute: its history is the start, one
// workflow task, a marker per local activity and the completion. Each
// GetVersion would add a marker and a TemporalChangeVersion upsert, a
// visibility write on the server for every order.
func TestOrderPlacedTodayRecordsNoVersionMarkers(t *testing.T) {
	history, err := os.ReadFile("testdata/histories/current/OrderPlaced.json")
	require.NoError(t, err)
	var recorded struct {
		Events []struct {
			EventType                     string
			MarkerRecordedEventAttributes *struct{ MarkerName string }
		}
	}
	require.NoError(t, json.Unmarshal(history, &recorded))
	var types, markers []string
	for _, e := range recorded.Events {
		types = append(types, e.EventType)
		if e.MarkerRecordedEventAttributes != nil {
			markers = append(markers, e.MarkerRecordedEventAttributes.MarkerName)
		}
	}
	require.NotContains(t, types, "EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES")
	require.Equal(t, []string{"LocalActivity"}, markers, "one local activity runs the three side effects")
}

// oneActivityOrderPlaced runs the side effects in one local activity
// whatever the input's shape: a workflow begun with three would find one.
func oneActivityOrderPlaced(ctx workflow.Context, in workflows.OrderPlacedInput) (workflows.OrderPlacedResult, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	var acts *activities.Activities
	order := activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}
	return workflows.OrderPlacedResult{}, workflow.ExecuteLocalActivity(ctx, acts.RunOrderSideEffects, order).Get(ctx, nil)
}

// threeLocalOrderPlaced runs three local activities whatever the input's
// shape: a workflow begun with one would find three.
func threeLocalOrderPlaced(ctx workflow.Context, in workflows.OrderPlacedInput) (workflows.OrderPlacedResult, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	var acts *activities.Activities
	order := activities.OrderInput{StoreID: in.StoreID, OrderID: in.OrderID}
	return sideBySide(ctx, workflow.ExecuteLocalActivity, order, acts.SendOrderEmail, acts.SendChatConfirmation, acts.CreateOrderShipment)
}

// sideBySide starts every activity with start, then waits for them all.
func sideBySide(ctx workflow.Context, start func(workflow.Context, any, ...any) workflow.Future, order activities.OrderInput,
	fns ...any) (workflows.OrderPlacedResult, error) {
	var futures []workflow.Future
	for _, fn := range fns {
		futures = append(futures, start(ctx, fn, order))
	}
	for _, f := range futures {
		if err := f.Get(ctx, nil); err != nil {
			return workflows.OrderPlacedResult{}, err
		}
	}
	return workflows.OrderPlacedResult{}, nil
}
