package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/mcpconfig"
)

// listResult is what the lister prints: one JSON object.
type listResult struct {
	OK, Failed, Tools int
	ByKind            map[string]int // failures by ServerError.Kind
	ListSeconds       float64        // Tools alone, in this process
	CloseSeconds      float64
	// HeapPerIdle is the live heap the fleet holds per connected server,
	// once listed and idle (after a GC), bytes; GoroutinesPerIdle the
	// goroutines.
	HeapPerIdle       float64
	GoroutinesPerIdle float64
}

// listMain is the anymcp contender: it lists the fleet of a config file
// from cold through package fleet and prints a listResult.
func listMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	config := fs.String("config", "", "the mcpServers file")
	timeout := fs.Duration("timeout", 3*time.Second, "each server's connect timeout")
	maxDials := fs.Int("max-dials", 0, "concurrent dials (0: the fleet's default)")
	only := fs.String("only", "", "list only the servers of this kind (e.g. stdio-2025)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	servers, err := readServers(*config)
	if err != nil {
		return err
	}
	if *only != "" {
		servers = slices.DeleteFunc(servers, func(s fleet.Server) bool {
			return !strings.HasPrefix(s.Name, *only+"-")
		})
		// One server of the kind first, alone and closed, so that what
		// the process sets up once (net/http, the transports' tables)
		// is not counted as the others' heap.
		if len(servers) > 1 {
			if err := warmUp(ctx, servers[0], *timeout); err != nil {
				return err
			}
			servers = servers[1:]
		}
	}
	base := quietHeap()
	goroutines := runtime.NumGoroutine()
	opts := []fleet.Option{fleet.WithConnectTimeout(*timeout)}
	if *maxDials > 0 {
		opts = append(opts, fleet.WithMaxDials(*maxDials))
	}
	start := time.Now()
	f, err := fleet.New(servers, opts...)
	if err != nil {
		return err
	}
	cat, err := f.Tools(ctx)
	if err != nil {
		f.Close()
		return err
	}
	r := listResult{ListSeconds: time.Since(start).Seconds(), Tools: len(cat.Tools), ByKind: map[string]int{}}
	r.Failed = len(cat.Errors)
	r.OK = len(servers) - r.Failed
	for _, e := range cat.Errors {
		r.ByKind[e.Kind]++
	}
	ready := 0
	for _, s := range f.Status() {
		if s.State == fleet.StateReady {
			ready++
		}
	}
	if ready > 0 {
		heap := quietHeap()
		r.HeapPerIdle = (float64(heap) - float64(base)) / float64(ready)
		r.GoroutinesPerIdle = float64(runtime.NumGoroutine()-goroutines) / float64(ready)
	}
	runtime.KeepAlive(cat)
	start = time.Now()
	if err := f.Close(); err != nil {
		return err
	}
	r.CloseSeconds = time.Since(start).Seconds()
	return json.NewEncoder(os.Stdout).Encode(r)
}

// warmUp dials and lists s in a fleet of its own, and closes it.
func warmUp(ctx context.Context, s fleet.Server, timeout time.Duration) error {
	f, err := fleet.New([]fleet.Server{s}, fleet.WithConnectTimeout(timeout))
	if err != nil {
		return err
	}
	cat, err := f.Tools(ctx)
	if err == nil && len(cat.Errors) > 0 {
		err = cat.Errors[s.Name]
	}
	return errors.Join(err, f.Close())
}

// quietHeap collects garbage until the number of goroutines settles (at
// most 20 times) and returns the live heap.
func quietHeap() uint64 {
	prev := -1
	for range 20 {
		runtime.GC()
		if g := runtime.NumGoroutine(); g == prev {
			break
		} else {
			prev = g
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// readServers reads the fleet's config file as a host does: package
// mcpconfig reads it, fleet.FromConfig makes the servers.
func readServers(path string) ([]fleet.Server, error) {
	places := mcpconfig.DefaultPlaces()
	entries, problems := places.Load([]mcpconfig.Location{places.File(path)})
	if len(problems) > 0 {
		return nil, problems[0]
	}
	servers, errs := fleet.FromConfig(entries, fleet.ConfigOptions{})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return servers, nil
}
