package sdkcompare_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// envHTTPServer, set to a transport of startServer, makes this test binary
// serve an HTTP test server of that kind instead of running tests: it
// prints the server's URL on a line of stdout and serves until its stdin
// ends. The memory benchmarks use it so that what they measure is the
// client's alone, as over stdio.
const envHTTPServer = "SDKCOMPARE_HTTP_SERVER"

// noRaceExitSleep spares a child built with -race the second the race
// detector waits at exit by default; it does nothing to other builds.
const noRaceExitSleep = "GORACE=atexit_sleep_ms=0"

// serveHTTPFromEnv serves as envHTTPServer says and exits, or returns at
// once when it is not set.
func serveHTTPFromEnv() {
	kind := os.Getenv(envHTTPServer)
	if kind == "" {
		return
	}
	s, stop := startServer(kind)
	if !s.isHTTP() {
		fmt.Fprintf(os.Stderr, "%s=%s: not an HTTP transport\n", envHTTPServer, kind)
		os.Exit(2)
	}
	fmt.Println(s.url)
	_, _ = io.Copy(io.Discard, os.Stdin)
	stop()
	os.Exit(0)
}

// serverStartWait bounds how long a server process may take to print its
// URL, and serverExitWait how long it may take to exit once its stdin ends.
const (
	serverStartWait = 30 * time.Second
	serverExitWait  = 10 * time.Second
)

// startServerProcess starts an HTTP test server of kind in a child process
// (this test binary again); stop ends it and waits for it.
func startServerProcess(kind string) (s *server, stop func() error, err error) {
	path, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(path, "-test.run=^$")
	cmd.Env = append(os.Environ(), envHTTPServer+"="+kind, noRaceExitSleep)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	stop = func() error {
		_ = in.Close()
		select {
		case err := <-waited:
			return err
		case <-time.After(serverExitWait):
			_ = cmd.Process.Kill()
			return errors.Join(fmt.Errorf("%s server process: still running %v after its stdin ended; killed", kind, serverExitWait), <-waited)
		}
	}
	type result struct {
		line string
		err  error
	}
	first := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		first <- result{line, err}
	}()
	var line string
	select {
	case r := <-first:
		line, err = r.line, r.err
	case <-time.After(serverStartWait):
		err = fmt.Errorf("no URL within %v", serverStartWait)
		_ = cmd.Process.Kill() // ends the read too: stdout closes
	}
	url := strings.TrimSpace(line)
	if err == nil && !strings.HasPrefix(url, "http://") {
		err = fmt.Errorf("the server process printed %q, not its URL", line)
	}
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("%s server process: %w", kind, err), stop())
	}
	return &server{transport: kind, url: url}, stop, nil
}
