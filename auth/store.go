package auth

import (
	"context"
	"crypto/ecdsa"
	"slices"
	"sync"
)

// Key names a token: the authorization server that issued it (its issuer
// identifier) and the resource it was issued for (the MCP server's
// resource identifier, RFC 8707).
type Key struct {
	Issuer   string `json:"issuer"`
	Resource string `json:"resource"`
}

// Store keeps tokens, keyed by issuer and resource, and client
// registrations, keyed by issuer. Implementations must be safe for
// concurrent use; a Store shared by several processes (a file) should make
// each write atomic. Tokens are secrets: keep them where only the user can
// read them.
type Store interface {
	// Token returns the token saved under k, or (nil, nil).
	Token(ctx context.Context, k Key) (*Token, error)
	// SaveToken saves t under k, replacing what was there.
	SaveToken(ctx context.Context, k Key, t *Token) error
	// DeleteToken forgets the token under k; no error if there is none.
	DeleteToken(ctx context.Context, k Key) error
	// Keys lists the keys of every saved token.
	Keys(ctx context.Context) ([]Key, error)
	// Client returns the registration saved for issuer, or (nil, nil).
	Client(ctx context.Context, issuer string) (*ClientInfo, error)
	// SaveClient saves c under c.Issuer.
	SaveClient(ctx context.Context, c *ClientInfo) error
	// DeleteClient forgets the registration for issuer.
	DeleteClient(ctx context.Context, issuer string) error
}

// KeyStore is a Store that also keeps the DPoP key its DPoP-bound tokens
// are bound to, so that they stay usable by the next Authorizer (another
// run of the program). FileStore is one. When Config.DPoPKey is nil and the
// Store is a KeyStore, the Authorizer uses its key.
type KeyStore interface {
	Store
	// DPoPKey returns the kept P-256 key, making and keeping one the
	// first time; (nil, nil) when it keeps none after all (a wrapper of
	// a Store that is not a KeyStore).
	DPoPKey(ctx context.Context) (*ecdsa.PrivateKey, error)
}

// LockingStore is a Store that several processes (or Authorizers) share,
// and that can hold the others off while one of them renews a token. An
// Authorizer whose Store is one holds the lock from reading the stored
// token to saving its refresh, so that a refresh token — which the
// authorization server may rotate at each use, and refuse, or revoke with
// every token issued from it, when it comes again — is used once: the
// others wait, then find the new token. FileStore is one.
type LockingStore interface {
	Store
	// LockTokens holds the others off until unlock is called (once), or
	// returns an error: ctx's, when it ends first.
	LockTokens(ctx context.Context) (unlock func(), err error)
}

// MemoryStore is a Store in memory. The zero value is ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	tokens  map[Key]Token
	clients map[string]ClientInfo
}

// Token implements Store.
func (m *MemoryStore) Token(_ context.Context, k Key) (*Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[k]
	if !ok {
		return nil, nil
	}
	t.Scopes = slices.Clone(t.Scopes)
	return &t, nil
}

// SaveToken implements Store.
func (m *MemoryStore) SaveToken(_ context.Context, k Key, t *Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tokens == nil {
		m.tokens = map[Key]Token{}
	}
	c := *t
	c.Scopes = slices.Clone(t.Scopes)
	m.tokens[k] = c
	return nil
}

// DeleteToken implements Store.
func (m *MemoryStore) DeleteToken(_ context.Context, k Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tokens, k)
	return nil
}

// Keys implements Store.
func (m *MemoryStore) Keys(context.Context) ([]Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]Key, 0, len(m.tokens))
	for k := range m.tokens {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys, nil
}

// Client implements Store.
func (m *MemoryStore) Client(_ context.Context, issuer string) (*ClientInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.clients[issuer]
	if !ok {
		return nil, nil
	}
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	return &c, nil
}

// SaveClient implements Store.
func (m *MemoryStore) SaveClient(_ context.Context, c *ClientInfo) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clients == nil {
		m.clients = map[string]ClientInfo{}
	}
	cc := *c
	cc.RedirectURIs = slices.Clone(c.RedirectURIs)
	m.clients[c.Issuer] = cc
	return nil
}

// DeleteClient implements Store.
func (m *MemoryStore) DeleteClient(_ context.Context, issuer string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.clients, issuer)
	return nil
}

func compareKeys(a, b Key) int {
	if a.Resource != b.Resource {
		if a.Resource < b.Resource {
			return -1
		}
		return 1
	}
	switch {
	case a.Issuer < b.Issuer:
		return -1
	case a.Issuer > b.Issuer:
		return 1
	}
	return 0
}
