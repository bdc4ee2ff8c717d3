package devenv

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"

	"github.com/merchantsvc/svc/workflows"
)

// The development server is whole when StartTemporal returns: every role
// has joined the membership ring (so an immediate Stop cannot race a
// service still joining it) and the service's search attributes exist. A
// restart on the same file keeps them and starts as fast as the first.
func TestTemporalStartsWholeAndStopsAtOnce(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "temporal.db")
	for i := range 2 {
		started := time.Now()
		tmp, err := StartTemporal(ctx, TemporalOptions{DBFile: file})
		require.NoError(t, err)
		t.Logf("start %d took %s", i+1, time.Since(started).Round(time.Millisecond))
		require.Less(t, time.Since(started), 10*time.Second, "a restart does not wait on the previous run's dead members")
		c, err := tmp.Client(ctx)
		require.NoError(t, err)
		attrs, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: tmp.Namespace})
		require.NoError(t, err)
		for name, kind := range workflows.SearchAttributeTypes {
			require.Equal(t, kind, attrs.GetCustomAttributes()[name], name)
		}
		require.NoError(t, workflows.RegisterSearchAttributes(ctx, c, tmp.Namespace), "registering again changes nothing")
		c.Close()
		require.NoError(t, tmp.Stop())
	}
}
