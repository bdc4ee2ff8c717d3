package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/internal/devenv"
	"github.com/merchantsvc/svc/workflows"
)

// temporalSetup says where a rig's Temporal server runs and keeps its
// state.
type temporalSetup struct {
	// apart runs it in a child process of its own (on disk when on SQLite).
	apart bool
	// postgres keeps its state on the benchmark's Postgres; nil: SQLite.
	postgres *devenv.TemporalPostgres
}

// name says where the state is, for the reports.
func (s temporalSetup) name() string {
	if s.postgres != nil {
		return "Postgres"
	}
	return "SQLite"
}

// runningTemporal is a started server: a client of it, its frontend's
// address, its process when apart, and how to stop it.
type runningTemporal struct {
	client   client.Client
	hostPort string
	pid      int
	stop     func()
}

// start starts the server as set up, dir holding its files, and dials it.
func (s temporalSetup) start(ctx context.Context, dir string) (runningTemporal, error) {
	opts := devenv.TemporalOptions{Postgres: s.postgres, SearchAttributes: workflows.SearchAttributeTypes}
	if s.apart {
		if s.postgres == nil {
			opts.DBFile = filepath.Join(dir, "temporal.db")
		}
		p, c, hostPort, err := startTemporalProcess(ctx, opts)
		if err != nil {
			return runningTemporal{}, err
		}
		return runningTemporal{client: c, hostPort: hostPort, pid: p.pid, stop: p.stop}, nil
	}
	tmp, err := devenv.StartTemporal(ctx, opts)
	if err != nil {
		return runningTemporal{}, err
	}
	c, err := tmp.Client(ctx)
	if err != nil {
		_ = tmp.Stop()
		return runningTemporal{}, err
	}
	return runningTemporal{client: c, hostPort: tmp.HostPort, stop: func() { _ = tmp.Stop() }}, nil
}

// temporalChild runs a Temporal server as the JSON options say, says
// "ready" on out, and stops when in closes: when the parent exits, however
// it exits, its pipe closes and the server goes with it.
func temporalChild(options string, in io.Reader, out io.Writer) error {
	var opts devenv.TemporalOptions
	if err := json.Unmarshal([]byte(options), &opts); err != nil {
		return err
	}
	tmp, err := devenv.StartTemporal(context.Background(), opts)
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

func startTemporalProcess(ctx context.Context, opts devenv.TemporalOptions) (*temporalProcess, client.Client, string, error) {
	ports, err := devenv.FreePorts(1)
	if err != nil {
		return nil, nil, "", err
	}
	opts.Port = ports[0]
	self, err := os.Executable()
	if err != nil {
		return nil, nil, "", err
	}
	options, err := json.Marshal(opts)
	if err != nil {
		return nil, nil, "", err
	}
	cmd := exec.Command(self, "-temporal-child", string(options))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, "", err
	}
	p := &temporalProcess{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		p.stop()
		return nil, nil, "", errors.Join(errors.New("the Temporal child did not start"), err)
	}
	hostPort := fmt.Sprintf("127.0.0.1:%d", ports[0])
	c, err := devenv.DialTemporal(ctx, hostPort, "default")
	if err != nil {
		p.stop()
		return nil, nil, "", err
	}
	return p, c, hostPort, nil
}

func (p *temporalProcess) stop() {
	_ = p.stdin.Close()
	_ = p.cmd.Wait()
}

// benchTemporal is the Temporal set-up the -temporal-store flag asks for:
// on Postgres, the databases name and name_visibility on the benchmark's
// server, dropped first so that each run starts on an empty history.
func benchTemporal(ctx context.Context, store, admin, name string, apart bool) (temporalSetup, error) {
	switch store {
	case "sqlite":
		return temporalSetup{apart: apart}, nil
	case "postgres":
	default:
		return temporalSetup{}, fmt.Errorf("-temporal-store %q: want postgres or sqlite", store)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return temporalSetup{}, err
	}
	defer conn.Close(ctx)
	for _, db := range []string{name, name + "_visibility"} {
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{db}.Sanitize()+` WITH (FORCE)`); err != nil {
			return temporalSetup{}, err
		}
	}
	return temporalSetup{apart: apart, postgres: &devenv.TemporalPostgres{AdminURL: admin, Database: name}}, nil
}

// runMixOn runs the load mix once on a rig whose Temporal is set up as
// given (the comparison of Temporal's stores).
func runMixOn(ctx context.Context, dbURL string, temporal temporalSetup, duration time.Duration, concurrency, tokenCount, subscriptions int) (mixRun, error) {
	l, err := startLoadRig(ctx, dbURL, temporal, duration, concurrency, tokenCount, subscriptions)
	if err != nil {
		return mixRun{}, err
	}
	defer l.close()
	return l.runMix(ctx, subscriptions, false)
}

// writeTemporalStores compares the mix with Temporal on SQLite and on
// Postgres, each from its own run.
func writeTemporalStores(b *strings.Builder, runs map[string]mixRun) {
	fmt.Fprintf(b, "**Temporal's store.** The mix with the in-process Temporal server keeping its state in SQLite (in memory, one history\n")
	fmt.Fprintf(b, "shard) and in Postgres (two databases on the benchmark's cluster, %d history shards), each a run of its own:\n\n", devenv.PostgresHistoryShards)
	fmt.Fprintf(b, "| Temporal on | requests/s | orders/s | worst p99 | server CPU (cores) | side effects: last after the load | email p99 |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, name := range []string{"SQLite", "Postgres"} {
		m, ok := runs[name]
		if !ok {
			continue
		}
		var worst time.Duration
		for _, got := range m.perRoute {
			worst = max(worst, result{latencies: got.Latencies}.percentile(0.99))
		}
		cpu := (m.usageAfter.cpu - m.usageBefore.cpu).Seconds() / m.window.Seconds()
		fmt.Fprintf(b, "| %s | %.0f | %.0f | %s | %.2f | %s | %s |\n", name, float64(m.requests())/m.wall.Seconds(), float64(m.orders)/m.wall.Seconds(),
			ms(worst), cpu, m.placedDrain.Round(time.Millisecond), ms(m.mailed.percentile(0.99)))
	}
	sqlite, postgres := runs["SQLite"], runs["Postgres"]
	rate := func(m mixRun) float64 { return float64(m.requests()) / m.wall.Seconds() }
	if rate(postgres) < rate(sqlite) {
		fmt.Fprintf(b, "\nOn Postgres the server process spends less CPU (no SQLite in it), but Postgres spends more than it saves, on the same two\n")
		fmt.Fprintf(b, "cores: the mix is slower, and SQLite stays the default for `make dev`, the tests and the benchmarks (docs/decisions.md).\n\n")
	} else {
		fmt.Fprintf(b, "\nThis run the mix was as fast or faster with Temporal on Postgres, against the choice of SQLite in docs/decisions.md: look again.\n\n")
	}
}
