package storage_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// A locked account's owner gets one notice a window however many sign-ins
// note the lock at once, and a network counts as known once a session
// started from it, for 30 days.
func TestNoteSignInLock(t *testing.T) {
	db := testenv.DB(t)
	clk := &clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	db.SetClock(clk.Now)
	ctx := context.Background()
	user := storage.User{Email: uuid.NewString() + "@example.com", PasswordHash: "x", Name: "T"}
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		return tx.CreateUserAndStore(ctx, &user, &storage.Store{Name: "Lock", Subdomain: "lock-" + uuid.NewString()[:8], Currency: "EGP", DefaultLanguage: "ar"})
	}))
	notices := func() int {
		var n int
		require.NoError(t, testenv.SQL(t, db).QueryRow(ctx, `SELECT count(*) FROM account_mails WHERE user_id = $1 AND kind = 'sign_in_lock'`, user.ID).Scan(&n))
		return n
	}
	const gap = 15 * time.Minute

	// Ten windows, each noted by thirty sign-ins at once: one notice each.
	for round := 1; round <= 10; round++ {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				known, err := db.NoteSignInLock(ctx, user.Email, "203.0.113.1", gap)
				assert.NoError(t, err)
				assert.False(t, known)
			}()
		}
		close(start)
		wg.Wait()
		require.Equal(t, round, notices(), "one notice for thirty sign-ins noting the lock at once")
		clk.now = clk.now.Add(gap + time.Second)
	}

	_, err := db.CreateSession(ctx, storage.NewSecret(""), user.ID, time.Hour, storage.RequestSource{IP: "2001:db8:1:2:3:4:5:6"})
	require.NoError(t, err)
	known, err := db.NoteSignInLock(ctx, user.Email, storage.SignInNetwork("2001:db8:1:2:ffff::1"), gap)
	require.NoError(t, err)
	require.True(t, known, "the same IPv6 /64")
	require.Equal(t, 11, notices(), "a new window's first lock sends its notice")
	known, err = db.NoteSignInLock(ctx, user.Email, "2001:db8:1:2::/64", gap)
	require.NoError(t, err)
	require.True(t, known)
	require.Equal(t, 11, notices(), "within the window, no second notice")

	clk.now = clk.now.Add(storage.KnownNetworkAge)
	known, err = db.NoteSignInLock(ctx, user.Email, "2001:db8:1:2::/64", gap)
	require.NoError(t, err)
	require.False(t, known, "thirty days on, the network is new again")

	known, err = db.NoteSignInLock(ctx, "nobody-"+user.Email, "2001:db8:1:2::/64", gap)
	require.NoError(t, err)
	require.False(t, known, "an email with no account")
}
