package fleet

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// A server that does not answer keeps its dial (or spawn) slot only for
// the start-up grace: with more hanging servers than slots, every one of
// them is dialled and the live servers are connected, all long before
// the hanging ones' connect timeout.
func TestHangingServersKeepNoSlot(t *testing.T) {
	const hanging, live, bound = 4, 2, 2
	for _, kind := range []string{"url", "command"} {
		t.Run(kind, func(t *testing.T) {
			arrivals := make(chan string, 4*hanging)
			var cfg []Server
			var pidLogs []string
			for i := range hanging {
				name := fmt.Sprintf("hang%d", i)
				var target client.Target
				if kind == "url" {
					target = client.URL(hangingURL(t, name, arrivals))
				} else {
					var pidLog string
					target, pidLog = hangingCommand(t, name, arrivals)
					pidLogs = append(pidLogs, pidLog)
				}
				cfg = append(cfg, Server{Name: name, Target: target, ConnectTimeout: time.Hour})
			}
			for i := range live {
				name := fmt.Sprintf("live%d", i)
				var target client.Target
				if kind == "url" {
					srv := testservers.StartStreamable(testservers.HTTPOptions{})
					t.Cleanup(srv.Close)
					target = client.URL(srv.URL)
				} else {
					var pidLog string
					target, pidLog = stdioServer(t, testservers.Options{})
					pidLogs = append(pidLogs, pidLog)
				}
				cfg = append(cfg, Server{Name: name, Target: target})
			}
			f, err := New(cfg, WithMaxDials(bound), WithMaxSpawns(bound), WithStartupGrace(20*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer checkGone(t, pidLogs...)
			defer f.Close()
			ctx := ctxT(t)

			// The hanging servers first: they take every slot.
			hctx, hcancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			defer wg.Wait()
			defer hcancel()
			for i := range hanging {
				wg.Go(func() { f.Conn(hctx, cfg[i].Name) })
			}
			wait, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			seen := map[string]bool{}
			for len(seen) < hanging {
				select {
				case name := <-arrivals:
					seen[name] = true
				case <-wait.Done():
					t.Fatalf("%d of %d hanging servers dialled (%v), with %d slots: the others wait for slots the hanging ones hold; states %v",
						len(seen), hanging, seen, bound, f.Status())
				}
			}
			for _, s := range cfg[hanging:] {
				if _, err := f.Conn(wait, s.Name); err != nil {
					t.Fatalf("%s, dialled after the hanging servers: %v; states %v", s.Name, err, f.Status())
				}
			}
			for _, st := range f.Status() {
				if strings.HasPrefix(st.Server, "hang") && st.State != StateConnecting {
					t.Errorf("%s is %s (%v), want still connecting (its timeout is an hour)", st.Server, st.State, st.Err)
				}
			}
		})
	}
}

// hangingURL is the URL of a server that accepts every request and never
// answers; its first request sends name to arrivals.
func hangingURL(t *testing.T, name string, arrivals chan<- string) string {
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server notices a client that left
		once.Do(func() { arrivals <- name })
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// hangingCommand is a command server that reads its stdin and never
// answers; each of its processes logs its pid to the returned file and
// sends name to arrivals when it has started.
func hangingCommand(t *testing.T, name string, arrivals chan<- string) (client.Target, string) {
	dir := t.TempDir()
	fifo, pidLog := filepath.Join(dir, "started"), filepath.Join(dir, "pids")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write: the FIFO always has a writer, so a process that
	// writes and exits is no end of file.
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			arrivals <- name
		}
	}()
	t.Cleanup(func() {
		r.Close()
		<-done
	})
	script := `echo $$ >> "$1"; echo started > "$2"; cat > /dev/null`
	return client.Command("/bin/sh", "-c", script, "hang", pidLog, fifo), pidLog
}
