package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// FileStore is a Store in one JSON file, readable by its owner only (mode
// 0600, in a directory created 0700). Every change reads the file, changes
// it and writes it whole to a temporary file that is renamed over it, so a
// reader never sees half a file and a crash never loses the old one.
//
// Several processes may share the file (scripts running mcpcall side by
// side, say). A change holds an exclusive flock(2) on a lock file next to
// it (path + ".lock"), so no change is lost to another's, and FileStore is
// a LockingStore: an Authorizer holds that lock while it renews a token, so
// that a refresh token, which the authorization server may rotate at each
// use, is used by one process while the others wait and then find the new
// token. Where flock(2) is missing (not Unix), the lock holds off only this
// process's other users, and two processes that change the file at the
// same moment may lose one change (the last rename wins).
type FileStore struct {
	path string
	once sync.Once
	sem  chan struct{} // LockTokens: one holder at a time within this process

	mu      sync.Mutex // one change at a time within this process
	flocked bool       // LockTokens holds the lock file: changes need not take it
	release func()     // LockTokens' release of the lock file
}

// NewFileStore returns a store kept at path. Nothing is read or created
// until the first use.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

var _ LockingStore = (*FileStore)(nil)

// lockPath is the lock file's path.
func (f *FileStore) lockPath() string { return f.path + ".lock" }

// LockTokens implements LockingStore: it holds off every other holder, in
// this process or another, until unlock; changes made meanwhile (by
// anyone in this process) go on without waiting for the lock themselves.
func (f *FileStore) LockTokens(ctx context.Context) (unlock func(), err error) {
	f.once.Do(func() { f.sem = make(chan struct{}, 1) })
	select {
	case f.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the token store lock %s: %w", f.lockPath(), context.Cause(ctx))
	}
	// mu first: a change that holds mu while it waits for another
	// process's lock must not find the lock taken by this process under
	// it, with no way to tell.
	f.mu.Lock()
	err = f.mkdir()
	var release func()
	if err == nil {
		release, err = lockFile(ctx, f.lockPath())
	}
	if err != nil {
		f.mu.Unlock()
		<-f.sem
		return nil, err
	}
	f.flocked, f.release = true, release
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.release()
			f.flocked, f.release = false, nil
			f.mu.Unlock()
			<-f.sem
		})
	}, nil
}

// mkdir makes the file's directory, 0700, when it is missing.
func (f *FileStore) mkdir() error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}

// Path returns the file's path.
func (f *FileStore) Path() string { return f.path }

// fileData is the file's content.
type fileData struct {
	Version int          `json:"version"`
	Tokens  []fileToken  `json:"tokens"`
	Clients []ClientInfo `json:"clients"`
	// DPoPKey is the DPoP key (PKCS #8, DER), made on first use.
	DPoPKey []byte `json:"dpop_key,omitempty"`
}

type fileToken struct {
	Key
	Token Token `json:"token"`
}

const fileVersion = 1

func (f *FileStore) load() (*fileData, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &fileData{Version: fileVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	var d fileData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("token store %s: %w", f.path, err)
	}
	if d.Version != fileVersion {
		return nil, fmt.Errorf("token store %s: version %d, want %d", f.path, d.Version, fileVersion)
	}
	return &d, nil
}

// save writes d atomically: a temporary file in the same directory,
// synced, then renamed over the old one.
func (f *FileStore) save(d *fileData) error {
	dir := filepath.Dir(f.path)
	if err := f.mkdir(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".*")
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	// CreateTemp makes the file 0600 already; Chmod makes sure on every OS.
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if err := os.Rename(name, f.path); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	ok = true
	return nil
}

// change runs fn on the file's content and writes it back, holding the
// lock file unless LockTokens holds it already.
func (f *FileStore) change(ctx context.Context, fn func(d *fileData)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.flocked {
		if err := f.mkdir(); err != nil {
			return err
		}
		release, err := lockFile(ctx, f.lockPath())
		if err != nil {
			return err
		}
		defer release()
	}
	d, err := f.load()
	if err != nil {
		return err
	}
	fn(d)
	return f.save(d)
}

func (f *FileStore) read() (*fileData, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.load()
}

// Token implements Store.
func (f *FileStore) Token(_ context.Context, k Key) (*Token, error) {
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	for _, t := range d.Tokens {
		if t.Key == k {
			tok := t.Token
			return &tok, nil
		}
	}
	return nil, nil
}

// SaveToken implements Store.
func (f *FileStore) SaveToken(ctx context.Context, k Key, t *Token) error {
	return f.change(ctx, func(d *fileData) {
		d.Tokens = slices.DeleteFunc(d.Tokens, func(e fileToken) bool { return e.Key == k })
		d.Tokens = append(d.Tokens, fileToken{Key: k, Token: *t})
		slices.SortFunc(d.Tokens, func(a, b fileToken) int { return compareKeys(a.Key, b.Key) })
	})
}

// DeleteToken implements Store.
func (f *FileStore) DeleteToken(ctx context.Context, k Key) error {
	return f.change(ctx, func(d *fileData) {
		d.Tokens = slices.DeleteFunc(d.Tokens, func(e fileToken) bool { return e.Key == k })
	})
}

// Keys implements Store.
func (f *FileStore) Keys(context.Context) ([]Key, error) {
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	keys := make([]Key, len(d.Tokens))
	for i, t := range d.Tokens {
		keys[i] = t.Key
	}
	return keys, nil
}

// Client implements Store.
func (f *FileStore) Client(_ context.Context, issuer string) (*ClientInfo, error) {
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	for _, c := range d.Clients {
		if c.Issuer == issuer {
			return &c, nil
		}
	}
	return nil, nil
}

// SaveClient implements Store.
func (f *FileStore) SaveClient(ctx context.Context, c *ClientInfo) error {
	return f.change(ctx, func(d *fileData) {
		d.Clients = slices.DeleteFunc(d.Clients, func(e ClientInfo) bool { return e.Issuer == c.Issuer })
		d.Clients = append(d.Clients, *c)
		slices.SortFunc(d.Clients, func(a, b ClientInfo) int {
			switch {
			case a.Issuer < b.Issuer:
				return -1
			case a.Issuer > b.Issuer:
				return 1
			}
			return 0
		})
	})
}

// DeleteClient implements Store.
func (f *FileStore) DeleteClient(ctx context.Context, issuer string) error {
	return f.change(ctx, func(d *fileData) {
		d.Clients = slices.DeleteFunc(d.Clients, func(e ClientInfo) bool { return e.Issuer == issuer })
	})
}

// DPoPKey implements KeyStore: the key is kept in the file, with the tokens
// bound to it (and as secret as they are).
func (f *FileStore) DPoPKey(ctx context.Context) (*ecdsa.PrivateKey, error) {
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	if key := parseDPoPKey(d.DPoPKey); key != nil {
		return key, nil
	}
	var key *ecdsa.PrivateKey
	var kerr error
	err = f.change(ctx, func(d *fileData) {
		if key = parseDPoPKey(d.DPoPKey); key != nil {
			return // another process made one meanwhile
		}
		// None, or unreadable: a new one (tokens bound to an unreadable
		// key are of no use anyway).
		if key, kerr = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); kerr == nil {
			d.DPoPKey, kerr = x509.MarshalPKCS8PrivateKey(key)
		}
	})
	if err = errors.Join(err, kerr); err != nil {
		return nil, fmt.Errorf("token store: the DPoP key: %w", err)
	}
	return key, nil
}

// parseDPoPKey returns the P-256 key b holds (PKCS #8), or nil.
func parseDPoPKey(b []byte) *ecdsa.PrivateKey {
	if len(b) == 0 {
		return nil
	}
	k, err := x509.ParsePKCS8PrivateKey(b)
	if ek, ok := k.(*ecdsa.PrivateKey); err == nil && ok && ek.Curve == elliptic.P256() {
		return ek
	}
	return nil
}
