package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// Soak bounds: past the warm-up round, resident memory may grow by at most
// half and the goroutines by at most soakGoroutineSlack before the soak
// counts as failed.
const (
	soakRSSGrowth      = 1.5
	soakGoroutineSlack = 50
)

// soakSample is the server process at one moment.
type soakSample struct {
	at         time.Duration
	rssMB      float64
	heapMB     float64 // live heap
	goroutines int
	backlog    int
	temporalMB float64 // the Temporal child's resident memory, not bounded
}

// runSoak runs the load mix for duration in rounds and reports 5xx (which
// must be 0), resident memory and goroutines after the first round and at
// the end (bounded growth), and the outbox backlog at the end. It returns
// the report and an error when a bound is broken.
func runSoak(ctx context.Context, dbURL string, temporal temporalSetup, duration time.Duration, concurrency, tokenCount int) (string, error) {
	round := min(time.Minute, duration/5)
	l, err := startLoadRig(ctx, dbURL, temporal, round, concurrency, tokenCount, 3)
	if err != nil {
		return "", err
	}
	defer l.close()
	sample := func(since time.Time) soakSample {
		var backlog int
		_ = l.db.Pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE dispatched_at IS NULL`).Scan(&backlog)
		// Memory the runtime keeps for reuse goes back to the OS first, so
		// resident memory shows what is held, not what was once needed.
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return soakSample{at: time.Since(since), rssMB: residentMB("self"), heapMB: float64(m.HeapAlloc) / (1 << 20),
			goroutines: runtime.NumGoroutine(), backlog: backlog, temporalMB: residentMB(strconv.Itoa(l.temporalPID))}
	}
	var (
		idleAfterFirst     soakSample
		samples            []soakSample
		requests, over500  int
		transport, rounds  int
		start              = time.Now()
		perRouteStatusSums = map[int]int{}
	)
	// settled waits for the outbox to drain and the work it started to end
	// (goroutines stop falling), then samples: goroutines under load come
	// and go with the deliveries in flight, so only idle counts compare.
	settled := func() soakSample {
		drainStart := time.Now()
		for sample(start).backlog > 0 && time.Since(drainStart) < time.Minute {
			time.Sleep(100 * time.Millisecond)
		}
		for prev, calm := runtime.NumGoroutine(), time.Now(); time.Since(calm) < 10*time.Second; {
			time.Sleep(500 * time.Millisecond)
			now := runtime.NumGoroutine()
			if now >= prev {
				break
			}
			prev = now
		}
		return sample(start)
	}
	for time.Since(start) < duration {
		got, err := runLoadClient(l.spec)
		if err != nil {
			return "", err
		}
		rounds++
		for _, r := range got.Routes {
			requests += r.Requests
			transport += r.Errors
			for status, n := range r.Statuses {
				perRouteStatusSums[status] += n
				if status >= 500 {
					over500 += n
				}
			}
		}
		samples = append(samples, sample(start))
		if rounds == 1 {
			idleAfterFirst = settled()
		}
	}
	drainStart := time.Now()
	final := settled()
	// SVC_SOAK_HEAPPROFILE names a file for the heap profile at the end, to
	// see what the growth is made of (go tool pprof -top -inuse_space).
	if path := os.Getenv("SVC_SOAK_HEAPPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			_ = pprof.WriteHeapProfile(f)
			_ = f.Close()
		}
	}
	first, last := samples[0], samples[len(samples)-1]

	var b strings.Builder
	fmt.Fprintf(&b, "Soak of %s (%d rounds of %s) on %d CPUs, %s: the load mix of `make load` (%d closed-loop clients;\n",
		time.Since(start).Round(time.Second), rounds, round, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"), concurrency)
	fmt.Fprintf(&b, "60%% product list, 25%% order create, 15%% order list; 3 webhook subscriptions). API, worker and dispatcher\n")
	fmt.Fprintf(&b, "run in the measured process; the Temporal server (SQLite on disk) runs in a child process, measured beside it.\n\n")
	fmt.Fprintf(&b, "| after | resident memory | live heap | goroutines | outbox backlog | Temporal server's resident memory |\n|---|---:|---:|---:|---:|---:|\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "| %s | %.0f MB | %.0f MB | %d | %d | %.0f MB |\n", s.at.Round(time.Second), s.rssMB, s.heapMB, s.goroutines, s.backlog, s.temporalMB)
	}
	fmt.Fprintf(&b, "| drained, %s later | %.0f MB | %.0f MB | %d | %d | %.0f MB |\n\n", time.Since(drainStart).Round(time.Second), final.rssMB, final.heapMB,
		final.goroutines, final.backlog, final.temporalMB)
	fmt.Fprintf(&b, "**%d requests, 5xx: %d, transport errors: %d.** Statuses: %v.\n", requests, over500, transport, perRouteStatusSums)
	fmt.Fprintf(&b, "Resident memory after the first round %.0f MB, at the end %.0f MB; live heap %.0f then %.0f MB (bound ×%.1f on both,\n",
		first.rssMB, last.rssMB, first.heapMB, last.heapMB, soakRSSGrowth)
	fmt.Fprintf(&b, "sampled after returning free memory to the OS); goroutines at rest (outbox drained, work finished) %d after the first round\n", idleAfterFirst.goroutines)
	fmt.Fprintf(&b, "and %d at the end (bound +%d; under load they rise and fall with the deliveries in flight);\n", final.goroutines, soakGoroutineSlack)
	fmt.Fprintf(&b, "outbox backlog %d when the load stopped, %d after draining.\n", last.backlog, final.backlog)

	var broken []string
	if over500 > 0 {
		broken = append(broken, fmt.Sprintf("%d answers were 5xx", over500))
	}
	if last.rssMB > soakRSSGrowth*first.rssMB {
		broken = append(broken, fmt.Sprintf("resident memory grew from %.0f to %.0f MB", first.rssMB, last.rssMB))
	}
	if last.heapMB > soakRSSGrowth*first.heapMB {
		broken = append(broken, fmt.Sprintf("the live heap grew from %.0f to %.0f MB", first.heapMB, last.heapMB))
	}
	if final.goroutines > idleAfterFirst.goroutines+soakGoroutineSlack {
		broken = append(broken, fmt.Sprintf("goroutines at rest grew from %d to %d", idleAfterFirst.goroutines, final.goroutines))
	}
	if final.backlog > 0 {
		broken = append(broken, fmt.Sprintf("%d outbox rows left undispatched", final.backlog))
	}
	if len(broken) > 0 {
		return b.String(), fmt.Errorf("soak failed: %s", strings.Join(broken, "; "))
	}
	return b.String(), nil
}

// residentMB is a process's resident memory now (VmRSS); pid is a number
// or "self".
func residentMB(pid string) float64 {
	raw, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
