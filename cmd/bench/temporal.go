package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/internal/devenv"
)

// temporalChild runs a Temporal server (SQLite in dbFile) on port, says
// "ready" on out, and stops when in closes: when the parent exits, however
// it exits, its pipe closes and the server goes with it.
func temporalChild(dbFile string, port int, in io.Reader, out io.Writer) error {
	tmp, err := devenv.StartTemporal(context.Background(), devenv.TemporalOptions{DBFile: dbFile, Port: port})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "ready")
	_, _ = io.Copy(io.Discard, in)
	return tmp.Stop()
}

// temporalProcess is a Temporal server in a child process of its own, so
// that the process under measurement holds only the service's memory.
type temporalProcess struct {
	cmd   *exec.Cmd
	stdin io.Closer
	pid   int
}

func startTemporalProcess(ctx context.Context, dir string) (*temporalProcess, client.Client, error) {
	ports, err := devenv.FreePorts(1)
	if err != nil {
		return nil, nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, "-temporal-child", filepath.Join(dir, "temporal.db"), "-temporal-port", strconv.Itoa(ports[0]))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	p := &temporalProcess{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		p.stop()
		return nil, nil, errors.Join(errors.New("the Temporal child did not start"), err)
	}
	c, err := devenv.DialTemporal(ctx, fmt.Sprintf("127.0.0.1:%d", ports[0]), "default")
	if err != nil {
		p.stop()
		return nil, nil, err
	}
	return p, c, nil
}

func (p *temporalProcess) stop() {
	_ = p.stdin.Close()
	_ = p.cmd.Wait()
}
