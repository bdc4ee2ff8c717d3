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

// What content that names media checks: a page body's img must be the URL
// of one of the store's ready media (its path, or the path under the API's
// base URL), an article's or collection's image_id a ready image of the
// store; and ContentReferrers then lists each of them.
func TestContentNamesTheStoresReadyMedia(t *testing.T) {
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
	create := func(store uuid.UUID, kind storage.MediaKind, ready bool) storage.Media {
		m := storage.Media{StoreID: store, Kind: kind, Filename: "f", Mime: "image/png", Size: 10, OriginalKey: "k"}
		require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error { return tx.CreateMedia(ctx, &m) }))
		if ready {
			_, err := db.MarkMediaReady(ctx, store, m.ID, 1200, 800)
			require.NoError(t, err)
		}
		return m
	}
	image, processing := create(storeID, storage.MediaImage, true), create(storeID, storage.MediaImage, false)
	file, theirs := create(storeID, storage.MediaFile, true), create(otherID, storage.MediaImage, true)

	base := "https://api.example.com"
	write := func(body string) error {
		return db.InTx(ctx, func(tx *storage.Tx) error {
			tx.ServeFilesAt(base)
			p := storage.ContentPage{StoreID: storeID, Title: storage.ContentText{EN: "About"}, Body: storage.ContentText{EN: body}}
			return tx.CreatePage(ctx, &p)
		})
	}
	page := func(src string) error { return write(`<p><img src="` + src + `" alt="x"></p>`) }
	for _, src := range []string{
		base + storage.MediaURLPath(storeID, image.ID, "medium.webp"),
		storage.MediaURLPath(storeID, image.ID, "thumbnail.webp"),
	} {
		require.NoError(t, page(src), src)
	}
	for _, src := range []string{
		"https://cdn.example.com/x.webp",
		"https://cdn.example.com" + storage.MediaURLPath(storeID, image.ID, "large.webp"),
		base + storage.MediaURLPath(storeID, image.ID, "original"),
		base + storage.MediaURLPath(storeID, file.ID, "file.pdf"), // a file is linked, not shown
		base + storage.MediaURLPath(storeID, processing.ID, "large.webp"),
		base + storage.MediaURLPath(otherID, theirs.ID, "large.webp"),
		base + storage.MediaURLPath(storeID, theirs.ID, "large.webp"),
		base + "/files/" + storeID.String() + "/not-an-id/large.webp",
	} {
		var bodyErr *storage.BodyError
		require.ErrorAs(t, page(src), &bodyErr, src)
		require.Equal(t, "body.en", bodyErr.Field)
		require.Equal(t, "image_not_allowed", bodyErr.Problem.Code, src)
	}

	// A link to a file of the media names it too.
	require.NoError(t, write(`<p><a href="`+base+storage.MediaURLPath(storeID, file.ID, "file.pdf")+`">PDF</a></p>`))

	collection := func(id *uuid.UUID) error {
		return db.InTx(ctx, func(tx *storage.Tx) error {
			c := storage.Collection{StoreID: storeID, Handle: "c-" + uuid.NewString()[:8], Kind: "manual", ImageID: id,
				Title: storage.CollectionText{En: "C"}}
			return tx.CreateCollection(ctx, &c)
		})
	}
	require.NoError(t, collection(&image.ID))
	for _, id := range []uuid.UUID{processing.ID, file.ID, theirs.ID, uuid.New()} {
		var invalid *storage.InvalidError
		require.ErrorAs(t, collection(&id), &invalid)
		require.Equal(t, "image_id", invalid.Field)
	}

	refs, err := db.ContentReferrers(ctx, storeID, image.ID)
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, ref := range refs {
		require.NotNil(t, ref.ID)
		kinds[ref.Kind]++
	}
	require.Equal(t, map[string]int{"page": 2, "collection": 1}, kinds)
	refs, err = db.ContentReferrers(ctx, storeID, file.ID)
	require.NoError(t, err)
	require.Len(t, refs, 1)
	require.Equal(t, "page", refs[0].Kind)
	var inUse *storage.MediaInUseError
	err = db.InTx(ctx, func(tx *storage.Tx) error { _, err := tx.DeleteMedia(ctx, storeID, file.ID); return err })
	require.ErrorAs(t, err, &inUse)
	require.True(t, errors.Is(err, storage.ErrConflict))
}
