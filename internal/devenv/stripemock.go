package devenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// StripeMock is Stripe's API double (github.com/stripe/stripe-mock) on
// loopback: it answers every Stripe API call from Stripe's OpenAPI
// fixtures, for `svc dev` and the tests.
type StripeMock struct {
	// URL is the API base to give stripe-go (http://127.0.0.1:port).
	URL  string
	proc *child
}

// StartStripeMock starts the project's pinned stripe-mock build.
func StartStripeMock(ctx context.Context, bin string, port int, log io.Writer) (*StripeMock, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("stripe-mock binary %s missing (run `make stripe-mock` to build the pinned version): %w", bin, err)
	}
	if log == nil {
		log = io.Discard
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// HTTPS is not used; its port is left to the system so two instances
	// never collide on stripe-mock's default.
	cmd := exec.Command(bin, "-http-addr", addr, "-https-addr", "127.0.0.1:")
	cmd.Stdout, cmd.Stderr = log, log
	proc, err := startChild("stripe-mock", cmd, syscall.SIGTERM)
	if err != nil {
		return nil, err
	}
	m := &StripeMock{URL: "http://" + addr, proc: proc}
	ready := answersOK(m.URL+"/v1/balance", http.Header{"Authorization": {"Bearer sk_test_ready"}})
	if err := waitFor(ctx, proc, 30*time.Second, ready); err != nil {
		_ = proc.Stop()
		return nil, err
	}
	return m, nil
}

// Stop shuts stripe-mock down.
func (m *StripeMock) Stop() error { return m.proc.Stop() }
