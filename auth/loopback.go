package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Loopback is a redirect listener for the authorization code flow of a
// native client (RFC 8252 section 7.3): an HTTP server on 127.0.0.1 at a
// port the system picks, that takes exactly one request at its callback
// path (or one segment below it), the browser coming back from the
// authorization server. Any other request is answered 404, and a second
// callback 410.
//
//	lb, err := auth.ListenLoopback(ctx)
//	...
//	defer lb.Close()
//	cfg.RedirectURL = lb.RedirectURL()
//	cfg.Authorize = func(ctx context.Context, u string) (string, error) {
//		fmt.Println("open", u)
//		return lb.Wait(ctx)
//	}
type Loopback struct {
	url  string
	srv  *http.Server
	ln   net.Listener
	got  chan string // the callback's URL; buffered, written once
	once sync.Once
	done chan struct{} // closed by Close
	stop func() bool   // ends the context watch
}

// CallbackPath is the path of the loopback redirect URL.
const CallbackPath = "/callback"

// ListenLoopback binds 127.0.0.1 on a random port and serves until the
// callback arrives, ctx ends or Close is called. Its RedirectURL is
// http://127.0.0.1:PORT/callback.
func ListenLoopback(ctx context.Context) (*Loopback, error) {
	return listenLoopback(ctx, 0, "127.0.0.1")
}

// ListenLoopbackPort is ListenLoopback on a fixed port, for a client whose
// redirect URI was registered as http://localhost:PORT/callback (as Claude
// Code's callbackPort setting has it): that is its RedirectURL.
func ListenLoopbackPort(ctx context.Context, port int) (*Loopback, error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("loopback redirect listener: port %d", port)
	}
	return listenLoopback(ctx, port, "localhost")
}

func listenLoopback(ctx context.Context, port int, host string) (*Loopback, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("loopback redirect listener: %w", err)
	}
	l := &Loopback{
		url:  fmt.Sprintf("http://%s:%d%s", host, ln.Addr().(*net.TCPAddr).Port, CallbackPath),
		ln:   ln,
		got:  make(chan string, 1),
		done: make(chan struct{}),
	}
	var served sync.Once
	mux := http.NewServeMux()
	callback := func(w http.ResponseWriter, r *http.Request) {
		first := false
		served.Do(func() { first = true })
		if !first {
			http.Error(w, "This sign-in link was already used.", http.StatusGone)
			return
		}
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		l.got <- u.String()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		fmt.Fprint(w, "<!doctype html><title>Signed in</title><p>You can close this window and return to the terminal.</p>\n")
		go l.Close() // one request only: stop listening once it is answered
	}
	mux.HandleFunc(CallbackPath, callback)
	// A client registered dynamically with an authorization server that
	// sends no iss comes back to a path of that server's own below
	// CallbackPath (see Config.RedirectURL); the Authorizer checks that it
	// is the one it sent the browser with.
	mux.HandleFunc(CallbackPath+"/{issuer}", callback)
	mux.HandleFunc("/", http.NotFound)
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln)
	l.stop = context.AfterFunc(ctx, func() { l.Close() })
	return l, nil
}

// RedirectURL returns http://127.0.0.1:PORT/callback.
func (l *Loopback) RedirectURL() string { return l.url }

// ErrLoopbackClosed is Wait's error once the listener is closed.
var ErrLoopbackClosed = errors.New("the loopback redirect listener is closed")

// Wait returns the URL of the callback request (path and query, with
// http://127.0.0.1:PORT in front), once it has arrived. It returns ctx's
// error when ctx ends first, ErrLoopbackClosed after Close.
func (l *Loopback) Wait(ctx context.Context) (string, error) {
	select {
	case u := <-l.got:
		return u, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-l.done:
		select {
		case u := <-l.got:
			return u, nil
		default:
			return "", ErrLoopbackClosed
		}
	}
}

// Close stops the listener; a request being answered is given a moment
// to finish.
func (l *Loopback) Close() error {
	var err error
	l.once.Do(func() {
		l.stop()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err = l.srv.Shutdown(ctx); err != nil {
			err = l.srv.Close()
		}
		close(l.done) // after the listener is gone
	})
	return err
}
