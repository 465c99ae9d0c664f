package auth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// Both stores keep tokens by issuer and resource, and registrations by
// issuer, as copies.
func TestStores(t *testing.T) {
	stores := map[string]func(t *testing.T) auth.Store{
		"memory": func(*testing.T) auth.Store { return &auth.MemoryStore{} },
		"file": func(t *testing.T) auth.Store {
			return auth.NewFileStore(filepath.Join(t.TempDir(), "dir", "tokens.json"))
		},
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := mk(t)
			k1 := auth.Key{Issuer: "https://as1", Resource: "https://mcp/a"}
			k2 := auth.Key{Issuer: "https://as2", Resource: "https://mcp/a"}
			k3 := auth.Key{Issuer: "https://as1", Resource: "https://mcp/b"}
			if tok, err := s.Token(ctx, k1); tok != nil || err != nil {
				t.Fatalf("empty store: %v, %v", tok, err)
			}
			exp := time.Now().Add(time.Hour).Round(0).UTC()
			for i, k := range []auth.Key{k1, k2, k3} {
				tok := &auth.Token{AccessToken: "at" + k.Issuer + k.Resource, RefreshToken: "rt", Expiry: exp, Scopes: []string{"s"}, ClientID: "c"}
				if err := s.SaveToken(ctx, k, tok); err != nil {
					t.Fatal(err)
				}
				tok.Scopes[0] = "changed after saving"
				_ = i
			}
			got, err := s.Token(ctx, k2)
			if err != nil || got.AccessToken != "athttps://as2https://mcp/a" || !got.Expiry.Equal(exp) || !reflect.DeepEqual(got.Scopes, []string{"s"}) {
				t.Fatalf("Token(k2) = %+v, %v", got, err)
			}
			keys, _ := s.Keys(ctx)
			if len(keys) != 3 {
				t.Fatalf("keys %v", keys)
			}
			if err := s.DeleteToken(ctx, k1); err != nil {
				t.Fatal(err)
			}
			if tok, _ := s.Token(ctx, k1); tok != nil {
				t.Fatal("deleted token still there")
			}
			if tok, _ := s.Token(ctx, k3); tok == nil {
				t.Fatal("deleting k1 deleted k3")
			}
			c := &auth.ClientInfo{Issuer: "https://as1", ClientID: "id", ClientSecret: "sec", RedirectURIs: []string{"http://127.0.0.1/cb"}, Registration: auth.RegistrationDynamic}
			if err := s.SaveClient(ctx, c); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Client(ctx, "https://as1"); got == nil || got.ClientSecret != "sec" {
				t.Fatalf("Client = %+v", got)
			}
			if got, _ := s.Client(ctx, "https://as2"); got != nil {
				t.Fatalf("a registration for another issuer: %+v", got)
			}
			s.DeleteClient(ctx, "https://as1")
			if got, _ := s.Client(ctx, "https://as1"); got != nil {
				t.Fatal("deleted registration still there")
			}
		})
	}
}

// The file is its owner's only, in a private directory, written whole by
// a rename: no temporary file is left, and a new FileStore reads it.
func TestFileStoreFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "anymcp")
	path := filepath.Join(dir, "tokens.json")
	s := auth.NewFileStore(path)
	ctx := context.Background()
	k := auth.Key{Issuer: "https://as", Resource: "https://mcp"}
	for i := range 20 {
		if err := s.SaveToken(ctx, k, &auth.Token{AccessToken: strings.Repeat("x", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v, want 0700", di.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "tokens.json" && e.Name() != "tokens.json.lock" {
			t.Fatalf("files left in the directory: %v (only the store and its lock file may stay)", entries)
		}
	}
	got, err := auth.NewFileStore(path).Token(ctx, k)
	if err != nil || got.AccessToken != strings.Repeat("x", 20) {
		t.Fatalf("reread: %v, %v", got, err)
	}
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := s.Token(ctx, k); err == nil {
		t.Fatal("a corrupt file read without error")
	}
}

// Tokens in a file outlive the process that got them: another Authorizer
// on the same file sends them without authorizing again.
func TestFileStoreAcrossAuthorizers(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	path := filepath.Join(t.TempDir(), "tokens.json")
	ctx := testContext(t)
	mustConnect(t, ctx, f.ps.URL, f.authorizer(t, auth.Config{Store: auth.NewFileStore(path)}))
	refusals := f.ps.Refusals()[401]
	a, err := auth.New(auth.Config{Store: auth.NewFileStore(path)}) // non-interactive
	if err != nil {
		t.Fatal(err)
	}
	mustConnect(t, ctx, f.ps.URL, a)
	if st := f.as.Stats(); st.Authorizations != 1 || st.Registrations != 1 {
		t.Fatalf("%+v", st)
	}
	if got := f.ps.Refusals()[401]; got != refusals {
		t.Fatalf("the stored token was not sent with the first request: %d more 401s", got-refusals)
	}
}

// Processes that share a FileStore renew a token once between them: the
// refresh token, rotated at each use, is spent by one, and the others wait
// for it and find the new token (here, Authorizers with a FileStore each
// on one file stand for the processes: flock(2) keeps open files apart).
func TestFileStoreOneRefreshAcrossProcesses(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	path := filepath.Join(t.TempDir(), "tokens.json")
	ctx := testContext(t)
	mustConnect(t, ctx, f.ps.URL, f.authorizer(t, auth.Config{Store: auth.NewFileStore(path)}))
	first := auth.NewFileStore(path)
	keys, _ := first.Keys(ctx)
	tok, _ := first.Token(ctx, keys[0])
	tok.Obtained, tok.Expiry = time.Now().Add(-time.Hour), time.Now().Add(10*time.Second) // due for a refresh
	if err := first.SaveToken(ctx, keys[0], tok); err != nil {
		t.Fatal(err)
	}

	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			a, err := auth.New(auth.Config{Store: auth.NewFileStore(path)}) // non-interactive
			if err == nil {
				err = connect(ctx, f.ps.URL, a)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if st := f.as.Stats(); st.Tokens["refresh_token"] != 1 || st.Authorizations != 1 {
		t.Fatalf("%d refreshes and %d authorizations, want 1 and 1", st.Tokens["refresh_token"], st.Authorizations)
	}
	now, _ := first.Token(ctx, keys[0])
	if now.AccessToken == tok.AccessToken || now.RefreshToken == "" || now.RefreshDue(time.Now()) {
		t.Fatalf("the stored token is not the refreshed one: %v", now)
	}
}

// LockTokens holds off every other holder and every change by another
// FileStore of the file, but not this one's own changes; unlock ends it.
func TestFileStoreLockTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "tokens.json")
	ctx := context.Background()
	a, b := auth.NewFileStore(path), auth.NewFileStore(path)
	k := auth.Key{Issuer: "https://as", Resource: "https://mcp"}
	unlock, err := a.LockTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SaveToken(ctx, k, &auth.Token{AccessToken: "a1"}); err != nil {
		t.Fatalf("a change by the holder: %v", err)
	}
	short := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}
	if _, err := a.LockTokens(short()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second LockTokens on the same store: %v, want it to wait", err)
	}
	if _, err := b.LockTokens(short()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("LockTokens on another store: %v, want it to wait", err)
	}
	if err := b.SaveToken(short(), k, &auth.Token{AccessToken: "b1"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a change by another store: %v, want it to wait", err)
	}
	if got, _ := b.Token(ctx, k); got == nil || got.AccessToken != "a1" {
		t.Errorf("another store reads %v, want the holder's token", got)
	}

	done := make(chan error, 1)
	go func() { done <- b.SaveToken(ctx, k, &auth.Token{AccessToken: "b2"}) }()
	unlock()
	unlock() // a second call does nothing
	if err := <-done; err != nil {
		t.Fatalf("the waiting change: %v", err)
	}
	unlockB, err := b.LockTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlockB()
	if got, _ := a.Token(ctx, k); got == nil || got.AccessToken != "b2" {
		t.Errorf("read %v, want b2", got)
	}
	if fi, err := os.Stat(path + ".lock"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, %v; want mode 0600", fi, err)
	}
}
