// Command fleethost is a small AI host over a fleet of MCP servers: it
// reads an mcpServers config file, lists every server's tools under
// their fleet names, searches them for what a user asked, and calls the
// best match, as an agent would before handing tools to an LLM.
//
// Run without arguments, it starts the repository's test servers (a
// 2026-07-28 HTTP server, a 2025 Streamable HTTP one, an HTTP+SSE one,
// a stdio one, and a dead one), writes a config file naming them, and
// uses that:
//
//	go run ./examples/fleethost
//	go run ./examples/fleethost -config ~/.cursor/mcp.json -query "read a file" -args '{"path":"README.md"}'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/mcpconfig"
	"github.com/anymcp/anymcp/testservers"
)

func main() {
	serve := flag.Bool(serveStdioFlag[1:], false, "serve the built-in stdio test server (how this binary starts its own \"local\" server)")
	config := flag.String("config", "", "an mcpServers config file (default: the built-in test servers)")
	query := flag.String("query", "add two numbers", "what to search the fleet's tools for")
	args := flag.String("args", `{"a": 2, "b": 3}`, "the JSON arguments of the call of the best match")
	timeout := flag.Duration("connect-timeout", 5*time.Second, "each server's connect timeout")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *serve {
		os.Exit(serveStdio(ctx))
	}
	if err := run(ctx, os.Stdout, *config, *query, json.RawMessage(*args), *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "fleethost:", err)
		os.Exit(1)
	}
}

// run is the host: config file → fleet → catalogue → search → call.
func run(ctx context.Context, w io.Writer, config, query string, args json.RawMessage, timeout time.Duration) error {
	if config == "" {
		dir, err := os.MkdirTemp("", "fleethost")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		stopServers, err := startTestServers(dir)
		if err != nil {
			return err
		}
		defer stopServers()
		config = filepath.Join(dir, "mcp.json")
	}

	// The servers of the config file, as every MCP host writes them.
	places := mcpconfig.DefaultPlaces()
	entries, problems := places.Load([]mcpconfig.Location{places.File(config)})
	if len(problems) > 0 {
		return problems[0]
	}
	servers, unusable := fleet.FromConfig(entries, fleet.ConfigOptions{})
	for _, err := range unusable {
		fmt.Fprintln(w, "left out:", err)
	}
	f, err := fleet.New(servers, fleet.WithConnectTimeout(timeout))
	if err != nil {
		return err
	}
	defer f.Close() // every connection closed, every process gone

	// The catalogue: what an LLM would be given.
	cat, err := f.Tools(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d tools from %d servers\n", len(cat.Tools), len(servers)-len(cat.Errors))
	for server, e := range cat.Errors {
		fmt.Fprintf(w, "  %s is not in the catalogue: %s\n", server, e.Kind)
	}

	// Search, for a host that cannot give an LLM every tool.
	matches, err := f.SearchTools(ctx, query, 3)
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		return fmt.Errorf("no tool matches %q", query)
	}
	fmt.Fprintf(w, "best matches for %q:\n", query)
	for _, m := range matches {
		fmt.Fprintf(w, "  %-16s %5.2f  (tool %s of server %s)\n", m.Name, m.Score, m.Tool.Tool.Name, m.Server)
	}

	// The call, by fleet name: the fleet routes it to its server.
	best := matches[0].Name
	res, err := f.CallTool(ctx, best, args)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s %s:\n", best, args)
	for _, c := range res.Content {
		if c.Type == "text" {
			fmt.Fprintln(w, " ", c.Text)
		}
	}
	if res.IsError {
		return fmt.Errorf("%s answered isError", best)
	}
	return nil
}

// localServer configures the stdio test server (tests log its pids).
var localServer = testservers.Options{Name: "local-tools"}

// serveStdioFlag makes this binary the fleet's "local" stdio server:
// an argument the config names, so no environment variable turns the
// host into a test server.
const serveStdioFlag = "-serve-stdio"

// serveStdio serves the stdio test server on stdin and stdout, with the
// Options the config's env gives it, and returns the exit status.
func serveStdio(ctx context.Context) int {
	opts, err := testservers.OptionsFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleethost: stdio server:", err)
		return 1
	}
	return testservers.ServeProcess(ctx, opts)
}

// startTestServers starts the built-in test servers and writes
// dir/mcp.json naming them, and a dead one; stop ends them.
func startTestServers(dir string) (stop func(), err error) {
	stateless := testservers.StartStateless(testservers.HTTPOptions{})
	streamable := testservers.StartStreamable(testservers.HTTPOptions{})
	legacy := testservers.StartLegacy(testservers.LegacyOptions{})
	dead := testservers.StartStreamable(testservers.HTTPOptions{})
	dead.Close() // its port is closed now
	stop = func() {
		stateless.Close()
		streamable.Close()
		legacy.Close()
	}
	self, err := os.Executable()
	if err != nil {
		stop()
		return nil, err
	}
	env := map[string]string{}
	for _, kv := range testservers.StdioEnv(localServer) {
		if k, v, _ := strings.Cut(kv, "="); k != testservers.EnvVar {
			env[k] = v
		}
	}
	doc := map[string]any{"mcpServers": map[string]any{
		"calendar": map[string]any{"url": stateless.URL},
		"issues":   map[string]any{"type": "http", "url": streamable.URL},
		"wiki":     map[string]any{"type": "sse", "url": legacy.URL},
		"local":    map[string]any{"command": self, "args": []string{serveStdioFlag}, "env": env},
		"offline":  map[string]any{"url": dead.URL},
	}}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "mcp.json"), data, 0o600)
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}
