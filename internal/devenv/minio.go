package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// MinIO is a local S3 endpoint run from the project's pinned MinIO build.
type MinIO struct {
	Endpoint  string // host:port
	AccessKey string
	SecretKey string
	proc      *child
}

// MinIOOptions says which binary runs where.
type MinIOOptions struct {
	Bin       string
	Dir       string
	Port      int
	AccessKey string
	SecretKey string
	Log       io.Writer
}

// StartMinIO starts a single-drive MinIO server on loopback.
func StartMinIO(ctx context.Context, opts MinIOOptions) (*MinIO, error) {
	if _, err := os.Stat(opts.Bin); err != nil {
		return nil, fmt.Errorf("minio binary %s missing (run `make minio` to build the pinned version): %w", opts.Bin, err)
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create minio dir: %w", err)
	}
	consolePort, err := FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", opts.Port)
	cmd := exec.Command(opts.Bin, "server", opts.Dir, "--address", addr,
		"--console-address", fmt.Sprintf("127.0.0.1:%d", consolePort), "--quiet")
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+opts.AccessKey,
		"MINIO_ROOT_PASSWORD="+opts.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	cmd.Stdout, cmd.Stderr = opts.Log, opts.Log
	proc, err := startChild("minio", cmd, syscall.SIGTERM)
	if err != nil {
		return nil, err
	}
	m := &MinIO{Endpoint: addr, AccessKey: opts.AccessKey, SecretKey: opts.SecretKey, proc: proc}
	if err := waitFor(ctx, proc, 60*time.Second, answersOK("http://"+addr+"/minio/health/ready", nil)); err != nil {
		_ = proc.Stop()
		return nil, err
	}
	return m, nil
}

// Stop shuts MinIO down.
func (m *MinIO) Stop() error { return m.proc.Stop() }
