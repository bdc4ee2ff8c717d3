package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

func withAccent(t *testing.T, doc json.RawMessage, color string) json.RawMessage {
	var v map[string]any
	require.NoError(t, json.Unmarshal(doc, &v))
	v["settings"].(map[string]any)["accent"] = color
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}

// Two saves with the same If-Match race: exactly one wins, the other is
// told the draft moved and gets the winner's draft.
func TestConcurrentDraftSavesOneWins(t *testing.T) {
	cs := newCartStore(t, 60)
	ctx := context.Background()
	c, err := cs.db.FindCustomization(ctx, cs.storeID)
	require.NoError(t, err)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		wins   int
		stales []storage.Customization
	)
	for i, color := range []string{"#111111", "#222222", "#333333", "#444444"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := cs.db.SaveDraft(ctx, cs.storeID, c.ETag, withAccent(t, c.Draft, color))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, storage.ErrStaleDraft):
				stales = append(stales, got)
			default:
				t.Errorf("save %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, wins)
	require.Len(t, stales, 3)
	final, err := cs.db.FindCustomization(ctx, cs.storeID)
	require.NoError(t, err)
	require.Equal(t, c.Revision+1, final.Revision)
	for _, s := range stales {
		require.Equal(t, final.ETag, s.ETag, "a refused save learns the current tag")
	}
}

// 21 publishes keep the 20 newest; restore puts a snapshot on top and
// replaces the draft.
func TestPublishRotatesAndRestoreGoesOnTop(t *testing.T) {
	cs := newCartStore(t, 60)
	ctx := context.Background()
	c, err := cs.db.FindCustomization(ctx, cs.storeID)
	require.NoError(t, err)
	var first storage.ThemeVersion
	for i := range 21 {
		color := "#0000" + string("0123456789abcdefghijk"[i]) + "0"
		if i >= 16 {
			color = "#00000" + string("0123456789abcdef"[i-16])
		}
		c, err = cs.db.SaveDraft(ctx, cs.storeID, c.ETag, withAccent(t, c.Draft, color))
		require.NoError(t, err, "save %d", i)
		v, err := cs.db.PublishDraft(ctx, cs.storeID, "")
		require.NoError(t, err)
		if i == 1 {
			first = v
		}
	}
	versions, err := cs.db.FindThemeVersions(ctx, cs.storeID)
	require.NoError(t, err)
	require.Len(t, versions, 20)
	require.Equal(t, first.ID, versions[19].ID, "the oldest of the 21 rotated out, the second is the oldest kept")

	restored, draft, err := cs.db.RestoreThemeVersion(ctx, cs.storeID, first.ID)
	require.NoError(t, err)
	require.JSONEq(t, string(first.Document), string(draft.Draft))
	versions, err = cs.db.FindThemeVersions(ctx, cs.storeID)
	require.NoError(t, err)
	require.Len(t, versions, 20)
	require.Equal(t, restored.ID, versions[0].ID, "on top")
	require.Equal(t, "restore", versions[0].Source)
	require.Equal(t, &first.ID, versions[0].RestoredFrom)
	_, err = cs.db.FindThemeVersion(ctx, cs.storeID, first.ID)
	require.ErrorIs(t, err, storage.ErrNotFound, "restoring pushed the now-oldest out")
}
