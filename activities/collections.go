package activities

import (
	"context"

	"github.com/google/uuid"
)

// RebuildCollectionInput names a smart collection whose rules changed.
type RebuildCollectionInput struct {
	StoreID      uuid.UUID
	CollectionID uuid.UUID
}

// RebuildCollection applies a smart collection's latest rules to its
// members in one transaction (storage.DB.RebuildCollection). A collection
// deleted meanwhile, or already rebuilt, is nothing to do.
func (a *Activities) RebuildCollection(ctx context.Context, in RebuildCollectionInput) error {
	return a.DB.RebuildCollection(ctx, in.StoreID, in.CollectionID)
}
