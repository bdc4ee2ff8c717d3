package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// CollectionRebuildInput names the rebuild of a smart collection after its
// rules changed (decisions §21); Version is the rules version the
// dispatcher saw, for the workflow's summary: the activity applies the
// latest rules whatever it is.
type CollectionRebuildInput struct {
	StoreID      uuid.UUID
	CollectionID uuid.UUID
	Version      int
}

// CollectionRebuildWorkflowID is the id of a collection's rebuilds: one at a
// time; rules changed while one runs are rebuilt by the next.
func CollectionRebuildWorkflowID(collectionID uuid.UUID) string {
	return "collection-rebuild:" + collectionID.String()
}

// CollectionRebuild applies a smart collection's latest rules: the activity
// evaluates every product of the store in memory and swaps the members in
// one transaction, so reads see the old set until it commits, then the new.
// It retries until it succeeds: the members must follow the rules.
func CollectionRebuild(ctx workflow.Context, in CollectionRebuildInput) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	return workflow.ExecuteActivity(actx, a.RebuildCollection, activities.RebuildCollectionInput{StoreID: in.StoreID, CollectionID: in.CollectionID}).Get(ctx, nil)
}
