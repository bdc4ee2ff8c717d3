package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/merchantsvc/svc/internal/devenv"
)

// scaleRun is the mix against a number of `svc api` and `svc worker`
// processes.
type scaleRun struct {
	processes int // API processes, and as many workers
	mix       mixRun
}

// runScaleOut runs the load mix against one `svc api` and one `svc worker`
// process, then two of each, on ports of their own, all sharing one
// Postgres (dbURL) and the rig's one Temporal. The processes are the
// service's own binary, built here, configured through its environment
// as a deployment would.
func runScaleOut(ctx context.Context, dbURL string, duration time.Duration, concurrency, tokenCount, subscriptions int) ([]scaleRun, error) {
	l, err := startLoadRigWith(ctx, dbURL, temporalSetup{}, duration, concurrency, tokenCount, subscriptions, false)
	if err != nil {
		return nil, err
	}
	defer l.close()
	dir, err := os.MkdirTemp("", "svc-scale-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "svc")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/svc").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build svc: %w: %s", err, out)
	}
	var runs []scaleRun
	for _, n := range []int{1, 2} {
		procs, bases, err := l.startProcesses(ctx, bin, n)
		if err != nil {
			return nil, err
		}
		l.spec.Bases = bases
		mix, err := l.runMix(ctx, subscriptions, false)
		procs.stop()
		if err != nil {
			return nil, err
		}
		runs = append(runs, scaleRun{processes: n, mix: mix})
	}
	return runs, nil
}

// processes are started service processes.
type processes []*exec.Cmd

// stop asks each to shut down, as a deployment would, and waits.
func (ps processes) stop() {
	for _, p := range ps {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range ps {
		_ = p.Wait()
	}
}

// startProcesses starts n `svc api` and n `svc worker` processes on the
// rig's database and Temporal, and answers them and the APIs' base URLs
// once every one is ready.
func (l *loadRig) startProcesses(ctx context.Context, bin string, n int) (processes, []string, error) {
	ports, err := devenv.FreePorts(3 * n)
	if err != nil {
		return nil, nil, err
	}
	common := append(os.Environ(),
		"SVC_DATABASE_URL="+l.dbURL,
		"SVC_TEMPORAL_ADDRESS="+l.temporalHostPort,
		"SVC_TASK_QUEUE=scale",
		"SVC_S3_ENDPOINT="+os.Getenv("SVC_TEST_S3_ENDPOINT"),
		"SVC_S3_ACCESS_KEY="+os.Getenv("SVC_TEST_S3_ACCESS_KEY"),
		"SVC_S3_SECRET_KEY="+os.Getenv("SVC_TEST_S3_SECRET_KEY"),
		"SVC_RATE_LIMIT_PER_MINUTE=300",
		"SVC_LOG_LEVEL=error",
		"SVC_SMTP_ADDR="+l.mail.Addr,
		"SVC_SMTP_NO_TLS=true",
		"SVC_SMTP_FROM=shop@example.com",
		"SVC_CHAT_BASE_URL="+l.chatURL,
		"SVC_CHAT_TOKEN=bench",
		"SVC_WEBHOOK_ALLOW_PRIVATE=true",
		"SVC_WEBHOOK_CA_FILE="+l.rec.caFile,
	)
	var procs processes
	var bases, probes []string
	start := func(role string, env ...string) error {
		cmd := exec.Command(bin, role)
		cmd.Env = append(common, env...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		procs = append(procs, cmd)
		return nil
	}
	for i := range n {
		apiAddr := fmt.Sprintf("127.0.0.1:%d", ports[3*i])
		if err := start("api", "SVC_HTTP_ADDR="+apiAddr, fmt.Sprintf("SVC_METRICS_ADDR=127.0.0.1:%d", ports[3*i+1])); err != nil {
			procs.stop()
			return nil, nil, err
		}
		workerAddr := fmt.Sprintf("127.0.0.1:%d", ports[3*i+2])
		if err := start("worker", "SVC_METRICS_ADDR="+workerAddr); err != nil {
			procs.stop()
			return nil, nil, err
		}
		bases = append(bases, l.baseURL("http://"+apiAddr))
		probes = append(probes, "http://"+apiAddr+"/healthz", "http://"+workerAddr+"/healthz")
	}
	if err := waitHealthy(ctx, probes); err != nil {
		procs.stop()
		return nil, nil, err
	}
	return procs, bases, nil
}

// waitHealthy waits until every URL answers 200.
func waitHealthy(ctx context.Context, urls []string) error {
	deadline := time.Now().Add(60 * time.Second)
	for _, u := range urls {
		for {
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
				err = fmt.Errorf("%s answered %d", u, resp.StatusCode)
			}
			if time.Now().After(deadline) {
				return errors.Join(errors.New("a service process did not come up"), err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// writeScaleOut reports the scale-out runs against one of each.
func writeScaleOut(b *strings.Builder, runs []scaleRun) {
	fmt.Fprintf(b, "**Scale out.** The same mix against `svc api` and `svc worker` processes (the service's binary, configured by its\n")
	fmt.Fprintf(b, "environment; each worker runs its dispatcher), on loopback ports of their own, sharing one Postgres and one Temporal\n")
	fmt.Fprintf(b, "(SQLite, in the benchmark's process); the load tool spreads its clients over the APIs:\n\n")
	fmt.Fprintf(b, "| processes | requests/s | orders/s | worst p99 | orders p99 | product list p99 | order list p99 | errors | side effects: last after the load |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	p99 := func(m mixRun, route string) time.Duration {
		return result{latencies: m.perRoute[route].Latencies}.percentile(0.99)
	}
	for _, r := range runs {
		m := r.mix
		var worst time.Duration
		errs := 0
		for name, got := range m.perRoute {
			worst = max(worst, p99(m, name))
			errs += got.Errors
		}
		fmt.Fprintf(b, "| %d API + %d worker | %.0f | %.0f | %s | %s | %s | %s | %d | %s (%d of %d orders) |\n", r.processes, r.processes,
			float64(m.requests())/m.wall.Seconds(), float64(m.orders)/m.wall.Seconds(), ms(worst),
			ms(p99(m, "POST /orders (5 lines)")), ms(p99(m, "GET /products?limit=20")), ms(p99(m, "GET /orders?limit=20")),
			errs, m.placedDrain.Round(time.Millisecond), m.placedCount, m.orders)
	}
	if len(runs) == 2 {
		one, two := runs[0].mix, runs[1].mix
		ratio := (float64(two.requests()) / two.wall.Seconds()) / (float64(one.requests()) / one.wall.Seconds())
		fmt.Fprintf(b, "\nTwo of each / one of each: %.0f%% of the requests/s. The last order-placed workflow finished %s after the load\n", 100*ratio,
			two.placedDrain.Round(100*time.Millisecond))
		fmt.Fprintf(b, "with two of each, %s with one of each (within milliseconds when API, worker and Temporal share one process,\n",
			one.placedDrain.Round(100*time.Millisecond))
		fmt.Fprintf(b, "above). These processes share two cores with Postgres, Temporal and the load tool, so more of them add no CPU: they\n")
		fmt.Fprintf(b, "contend for it with the Temporal server, whose share decides whether the workflows keep up with the orders\n")
		fmt.Fprintf(b, "arriving. What the run shows is that replicas share the work correctly (rate limits, the outbox, the\n")
		fmt.Fprintf(b, "order-placed starts: no errors, no order's side effects lost or doubled); a scale-out gain needs cores per replica\n")
		fmt.Fprintf(b, "and a Temporal with cores of its own (docs/operations.md).\n")
	}
}

// writeLoadGoals lists issue 25's five goals against this run's figures.
func writeLoadGoals(b *strings.Builder, mix mixRun, hooks [2]webhookFigures, runs []scaleRun) {
	var worst time.Duration
	for _, got := range mix.perRoute {
		worst = max(worst, result{latencies: got.Latencies}.percentile(0.99))
	}
	rate := float64(mix.requests()) / mix.wall.Seconds()
	fmt.Fprintf(b, "\n**The load goals, this run:**\n\n")
	fmt.Fprintf(b, "1. Side effects keep pace: the last order-placed workflow %s after the load (within 5 s), confirmation email p99 %s (under 5 s), %d of %d orders: %s.\n",
		mix.placedDrain.Round(time.Millisecond), ms(mix.mailed.percentile(0.99)), mix.placedCount, mix.orders,
		verdict(mix.placedCount == mix.orders && mix.placedDrain <= 5*time.Second && mix.mailed.requests == mix.orders && mix.mailed.percentile(0.99) < 5*time.Second))
	fmt.Fprintf(b, "2. A faster mix: %.0f requests/s, worst p99 %s (≥ 500 and < 100 ms): %s; the CPU per request above says why.\n",
		rate, ms(worst), verdict(rate >= 500 && worst < 100*time.Millisecond))
	fmt.Fprintf(b, "3. Durable webhooks: the fan-out at %.0f%% of the bare pool (medians of %d alternating rounds; ≥ 60%%): %s; %.0f%% with fsync on.\n",
		100*hooks[0].ratio(), fanOutRounds, verdict(hooks[0].ratio() >= 0.60), 100*hooks[1].ratio())
	fmt.Fprintf(b, "4. Honest durability: the mix, its order creates and its drains with fsync on beside fsync off above; the orders and webhooks\n")
	fmt.Fprintf(b, "   suites give theirs beside their own tables: reported.\n")
	fmt.Fprintf(b, "5. Scale out: %d runs against the service's processes above, and docs/operations.md for 100 000 orders a day: reported.\n", len(runs))
}
