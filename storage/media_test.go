package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// The questions other content asks of the media library: which ids are the
// store's ready media (of a kind), and whether a URL is one of its files.
func TestStoreMediaIDsAndFindMediaByURL(t *testing.T) {
	ctx, db := context.Background(), testenv.DB(t)
	newStore := func() uuid.UUID {
		var id uuid.UUID
		require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
			user := storage.User{Email: uuid.NewString() + "@example.com", PasswordHash: "x", Name: "M"}
			store := storage.Store{Name: "Media", Subdomain: "media-" + uuid.NewString()[:8], Currency: "EGP", DefaultLanguage: "ar"}
			err := tx.CreateUserAndStore(ctx, &user, &store)
			id = store.ID
			return err
		}))
		return id
	}
	storeID, otherID := newStore(), newStore()
	create := func(store uuid.UUID, kind storage.MediaKind) storage.Media {
		m := storage.Media{StoreID: store, Kind: kind, Filename: "f", Mime: "image/png", Size: 10, OriginalKey: "k"}
		require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error { return tx.CreateMedia(ctx, &m) }))
		return m
	}
	ready := create(storeID, storage.MediaImage)
	_, err := db.MarkMediaReady(ctx, storeID, ready.ID, 1200, 800)
	require.NoError(t, err)
	processing := create(storeID, storage.MediaImage)
	file := create(storeID, storage.MediaFile)
	theirs := create(otherID, storage.MediaFile)

	ids := []uuid.UUID{ready.ID, processing.ID, file.ID, theirs.ID}
	images, err := db.StoreMediaIDs(ctx, storeID, storage.MediaImage, ids)
	require.NoError(t, err)
	require.Equal(t, map[uuid.UUID]bool{ready.ID: true, processing.ID: false, file.ID: false, theirs.ID: false}, images)
	anyKind, err := db.StoreMediaIDs(ctx, storeID, "", ids)
	require.NoError(t, err)
	require.Equal(t, map[uuid.UUID]bool{ready.ID: true, processing.ID: false, file.ID: true, theirs.ID: false}, anyKind)

	base := "https://api.example.com"
	for _, url := range []string{
		base + storage.MediaURLPath(storeID, ready.ID, "medium.webp"),
		storage.MediaURLPath(storeID, ready.ID, "thumbnail.webp"),
		base + storage.MediaURLPath(storeID, file.ID, "file.pdf"),
	} {
		_, err := db.FindMediaByURL(ctx, storeID, base, url)
		require.NoError(t, err, url)
	}
	for _, url := range []string{
		"https://cdn.example.com/x.webp",
		base + storage.MediaURLPath(storeID, ready.ID, "original"),
		base + storage.MediaURLPath(storeID, processing.ID, "large.webp"),
		base + storage.MediaURLPath(otherID, theirs.ID, "file.pdf"),
		base + storage.MediaURLPath(storeID, theirs.ID, "file.pdf"),
		base + "/files/" + storeID.String() + "/" + "not-an-id/large.webp",
	} {
		_, err := db.FindMediaByURL(ctx, storeID, base, url)
		require.True(t, errors.Is(err, storage.ErrNotFound), "%s: %v", url, err)
	}
}
