package scaleout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// WriteKey writes a random 32-byte state key, hex, to path (mode 0600).
func WriteKey(path string) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600)
}

// RunID is a random name for one run, a prefix of its keys.
func RunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// FreePort is a port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartHAProxy runs HAProxy (the binary bin) in front of the replicas at
// urls (http://host:port each), with HAProxyConfig written to
// dir/haproxy.cfg, and waits until it answers. It returns the process and
// its MCP endpoint (http://127.0.0.1:PORT/mcp). A port picked free can be
// taken before HAProxy binds it: it tries 3 ports.
func StartHAProxy(ctx context.Context, bin, dir, pidFile string, urls []string) (*Proc, string, error) {
	backends := make([]string, len(urls))
	for i, u := range urls {
		backends[i] = strings.TrimPrefix(u, "http://")
	}
	var lastErr error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			return nil, "", err
		}
		listen := fmt.Sprintf("127.0.0.1:%d", port)
		cfgFile := filepath.Join(dir, "haproxy.cfg")
		if err := os.WriteFile(cfgFile, []byte(HAProxyConfig(listen, backends)), 0o600); err != nil {
			return nil, "", err
		}
		if err := Exec0(ctx, bin, "-c", "-q", "-f", cfgFile); err != nil {
			return nil, "", fmt.Errorf("haproxy -c refused %s: %w", cfgFile, err)
		}
		p, err := Start("haproxy", dir, pidFile, bin, "-db", "-f", cfgFile)
		if err != nil {
			return nil, "", err
		}
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		lastErr = waitServing(wctx, p, "http://"+listen+"/mcp")
		cancel()
		if lastErr == nil {
			return p, "http://" + listen + "/mcp", nil
		}
		p.Stop(2 * time.Second)
	}
	return nil, "", lastErr
}

// waitServing waits until HAProxy, which prints nothing when it is ready,
// answers HTTP at u: it polls, every 20ms, until ctx ends or p exits.
func waitServing(ctx context.Context, p *Proc, u string) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	hc := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.Header.Get(ReplicaHeader) != "" {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("haproxy exited (%v); its stderr (%s):\n    %s", p.ExitErr(), p.Log, p.StderrTail())
		case <-ctx.Done():
			return fmt.Errorf("haproxy did not answer at %s in time; its stderr (%s):\n    %s", u, p.Log, p.StderrTail())
		case <-tick.C:
		}
	}
}

// Replicas is an http.RoundTripper that counts the responses of each
// replica (HAProxy's ReplicaHeader), in the order first seen.
type Replicas struct {
	Next http.RoundTripper

	mu     sync.Mutex
	names  []string
	counts map[string]int
}

func (r *Replicas) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.Next.RoundTrip(req)
	if err == nil {
		if name := resp.Header.Get(ReplicaHeader); name != "" {
			r.mu.Lock()
			if r.counts == nil {
				r.counts = map[string]int{}
			}
			if r.counts[name] == 0 {
				r.names = append(r.names, name)
			}
			r.counts[name]++
			r.mu.Unlock()
		}
	}
	return resp, err
}

// Names are the replicas that answered, in the order first seen.
func (r *Replicas) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}

// Count is how many responses replica name gave.
func (r *Replicas) Count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[name]
}
