// Package devenv runs the service's backing parts on one machine for `svc dev`
// and the test harness: a throwaway or persistent Postgres cluster started from
// the machine's PostgreSQL binaries, a MinIO child process, and an in-process
// Temporal server with its web UI. Nothing here is used in production.
package devenv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
	"time"
)

// FreePort returns a loopback TCP port nobody listens on right now.
func FreePort() (int, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts returns n distinct free loopback ports, below 32768: outside
// the kernel's ephemeral range, so an outgoing connection (a parallel
// test's, say) cannot take a chosen port before its server binds it, and
// within the smallint where Temporal's Postgres schema keeps a member's
// port. Every listener stays open until all are chosen: closing each at
// once could hand the same port out twice.
func FreePorts(n int) ([]int, error) {
	return holdPorts(n, func() int { return 20000 + rand.IntN(12000) })
}

// holdPorts listens on n distinct loopback ports, each asked of pick,
// until all are chosen, then frees them. A pick that is taken is tried
// again, up to a thousand times in all.
func holdPorts(n int, pick func() int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	var err error
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts == 1000 {
			return nil, fmt.Errorf("find free port: %w", err)
		}
		var l net.Listener
		if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", pick())); err != nil {
			continue
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// child is a started child process and how to stop it politely.
type child struct {
	name string
	cmd  *exec.Cmd
	stop syscall.Signal
	done chan error
}

func startChild(name string, cmd *exec.Cmd, stop syscall.Signal) (*child, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// If this process dies without cleaning up, the child goes too.
	cmd.SysProcAttr.Pdeathsig = stop
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, stop: stop, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	return c, nil
}

// exited reports a child that ended on its own.
func (c *child) exited() error {
	select {
	case err := <-c.done:
		c.done <- err
		return fmt.Errorf("%s exited: %v", c.name, err)
	default:
		return nil
	}
}

// Stop signals the child and waits up to 20 s before killing it.
func (c *child) Stop() error {
	if c == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(c.stop)
	select {
	case <-c.done:
		return nil
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s did not stop in time; killed", c.name)
	}
}

// waitFor polls check until it succeeds, the child exits, or the time is up.
func waitFor(ctx context.Context, c *child, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if err := c.exited(); err != nil {
			return err
		}
		if last = check(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w", c.name, timeout, errors.Join(ctx.Err(), last))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// answersOK is a readiness check for waitFor: GET url (with header)
// answers 200.
func answersOK(url string, header http.Header) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	}
}

// unprivilegedUser is who runs Postgres: the current user, or the `postgres`
// user when this process is root (Postgres refuses to run as root).
func unprivilegedUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root and there is no `postgres` user to run PostgreSQL as; " +
			"install the Debian package `postgresql` (it creates the user) or run as a normal user")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
