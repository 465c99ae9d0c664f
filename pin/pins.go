package pin

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"
)

// Limits bound what a Pins keeps, so that servers that list ever more
// tools, or ever larger ones, cannot grow it without end. A zero field
// takes its default: DefaultRecords, DefaultDefinition, DefaultKept.
type Limits struct {
	// Records is how many tools are pinned at most; a tool seen for the
	// first time beyond it is held back (ErrFull).
	Records int
	// Definition is the largest definition (its canonical members, in
	// bytes) kept to say what changed; a larger one is pinned by its
	// fingerprint only.
	Definition int
	// Kept is how many bytes of definitions are kept in all; beyond it,
	// new pins keep their fingerprint only.
	Kept int
}

// The limits of a Pins by default.
const (
	DefaultRecords    = 100_000
	DefaultDefinition = 256 << 10
	DefaultKept       = 16 << 20
)

// Option configures a Pins, in New.
type Option func(*Pins)

// WithLimits sets the bounds of what a Pins keeps.
func WithLimits(l Limits) Option {
	return func(p *Pins) {
		if l.Records > 0 {
			p.limits.Records = l.Records
		}
		if l.Definition > 0 {
			p.limits.Definition = l.Definition
		}
		if l.Kept > 0 {
			p.limits.Kept = l.Kept
		}
	}
}

// Pins checks tool definitions against the ones approved, kept in a
// Store by a key the caller chooses: the key names the server and the
// tool ("files/read_file"), so that two servers' tools of the same name
// are pinned apart, and is nothing the server can change (a fleet name
// can: docs/pinning.md). Its methods may be called from many goroutines
// at once.
//
// Trust is on first use: the first definition seen under a key is
// approved as it is. Later, a definition that differs is held back.
type Pins struct {
	store  Store
	limits Limits

	mu     sync.Mutex
	loaded bool
	recs   map[string]Record
	kept   int                 // bytes of Record.Tool in recs
	seen   map[string][32]byte // key → SHA-256 of the raw bytes last found to match its record
}

// New returns a Pins over store; it reads store on first use.
func New(store Store, opts ...Option) *Pins {
	p := &Pins{store: store, limits: Limits{Records: DefaultRecords, Definition: DefaultDefinition, Kept: DefaultKept}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Verdict is what Check found for a definition it lets through.
type Verdict int

// The verdicts.
const (
	First Verdict = iota + 1 // seen for the first time: pinned and approved
	Same                     // the definition approved
)

func (v Verdict) String() string {
	switch v {
	case First:
		return "first"
	case Same:
		return "same"
	}
	return "unknown"
}

// Check checks a tool's definition (the Tool object, as the server sent
// it) against the one pinned under key. First sight pins it (First);
// the same definition is Same. A different one is a *ChangedError; one
// that cannot be pinned, a *NotPinnedError: hold the tool back. Other
// errors are the Store's, or ctx's.
func (p *Pins) Check(ctx context.Context, key string, raw json.RawMessage) (Verdict, error) {
	res, err := p.check(ctx, []item{{key: key, raw: raw}})
	if err != nil {
		return 0, err
	}
	return res[0].verdict, res[0].err
}

// Approve pins raw under key, approved now, in place of what was there:
// after a person or a policy accepted a change (ChangedError.Definition).
func (p *Pins) Approve(ctx context.Context, key string, raw json.RawMessage) error {
	if err := checkKey(key); err != nil {
		return err
	}
	c, err := canonicalize(raw)
	if err != nil {
		return &NotPinnedError{Key: key, Err: err}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadLocked(ctx); err != nil {
		return err
	}
	old, had := p.recs[key]
	if !had && len(p.recs) >= p.limits.Records {
		return &NotPinnedError{Key: key, Err: ErrFull}
	}
	p.putLocked(key, p.recordLocked(c, old))
	if err := p.store.Save(ctx, p.recs); err != nil {
		p.restoreLocked(key, old, had)
		return err
	}
	p.seen[key] = sha256.Sum256(raw)
	return nil
}

// Forget removes the pin of key: the next definition seen under it is
// trusted on first use again.
func (p *Pins) Forget(ctx context.Context, key string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadLocked(ctx); err != nil {
		return err
	}
	old, had := p.recs[key]
	if !had {
		return nil
	}
	p.deleteLocked(key)
	if err := p.store.Save(ctx, p.recs); err != nil {
		p.restoreLocked(key, old, true)
		return err
	}
	return nil
}

// item is one definition to check, and what was found.
type item struct {
	key     string
	raw     json.RawMessage
	sum     [32]byte
	c       *canonical
	verdict Verdict
	err     error  // *ChangedError or *NotPinnedError
	pinned  Record // for a change: the record it differs from
}

// check checks items in three steps: under the lock, the ones whose raw
// bytes are those last found to match; then, without it, the others are
// made canonical; then, under the lock again, compared, and the new ones
// pinned and saved at once. A failed Save pins none of them.
func (p *Pins) check(ctx context.Context, items []item) ([]item, error) {
	for i := range items {
		items[i].sum = sha256.Sum256(items[i].raw)
	}
	p.mu.Lock()
	if err := p.loadLocked(ctx); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	todo := 0
	for i := range items {
		it := &items[i]
		if s, ok := p.seen[it.key]; ok && s == it.sum {
			it.verdict = Same
		} else {
			todo++
		}
	}
	p.mu.Unlock()
	if todo == 0 {
		return items, nil
	}
	for i := range items {
		it := &items[i]
		if it.verdict != 0 {
			continue
		}
		if err := checkKey(it.key); err != nil {
			it.err = &NotPinnedError{Key: it.key, Err: err}
			continue
		}
		c, err := canonicalize(it.raw)
		if err != nil {
			it.err = &NotPinnedError{Key: it.key, Err: err}
			continue
		}
		it.c = c
	}

	p.mu.Lock()
	var added []string
	for i := range items {
		it := &items[i]
		if it.c == nil {
			continue
		}
		rec, ok := p.recs[it.key]
		switch {
		case ok && rec.Fingerprint == it.c.fingerprint:
			it.verdict = Same
			p.seen[it.key] = it.sum
		case ok:
			it.pinned = rec
		case len(p.recs) >= p.limits.Records:
			it.err = &NotPinnedError{Key: it.key, Err: ErrFull}
		default:
			p.putLocked(it.key, p.recordLocked(it.c, Record{}))
			p.seen[it.key] = it.sum
			added = append(added, it.key)
			it.verdict = First
		}
	}
	if len(added) > 0 {
		if err := p.store.Save(ctx, p.recs); err != nil {
			for _, k := range added {
				p.deleteLocked(k)
			}
			p.mu.Unlock()
			return nil, err
		}
	}
	p.mu.Unlock()

	for i := range items {
		if it := &items[i]; it.c != nil && it.verdict == 0 && it.err == nil {
			it.err = changed(it.key, it.pinned, it.c, it.raw)
		}
	}
	return items, nil
}

// changed is the error of a definition c that differs from rec.
func changed(key string, rec Record, c *canonical, raw json.RawMessage) *ChangedError {
	e := &ChangedError{Key: key, Pinned: rec.Fingerprint, Fingerprint: c.fingerprint, Definition: raw}
	if rec.Tool == nil {
		return e
	}
	old, err := parse(rec.Tool)
	if err != nil || old.kind != '{' {
		return e // a store's record that is not canonical JSON: what changed is not known
	}
	var d differ
	d.diff(old, c.tree)
	e.Changes, e.More = d.changes, d.more
	return e
}

// checkKey refuses a key that is empty or over MaxKey bytes.
func checkKey(key string) error {
	if key == "" || len(key) > MaxKey {
		return ErrKey
	}
	return nil
}

// recordLocked is the record of c, approved now, keeping its canonical
// bytes when the limits allow (old's are given back first).
func (p *Pins) recordLocked(c *canonical, old Record) Record {
	r := Record{Fingerprint: c.fingerprint, Approved: time.Now().UTC()}
	if len(c.bytes) <= p.limits.Definition && p.kept-len(old.Tool)+len(c.bytes) <= p.limits.Kept {
		r.Tool = json.RawMessage(c.bytes)
	}
	return r
}

func (p *Pins) putLocked(key string, r Record) {
	if old, ok := p.recs[key]; ok {
		p.kept -= len(old.Tool)
	}
	p.recs[key] = r
	p.kept += len(r.Tool)
	delete(p.seen, key)
}

func (p *Pins) deleteLocked(key string) {
	if old, ok := p.recs[key]; ok {
		p.kept -= len(old.Tool)
		delete(p.recs, key)
	}
	delete(p.seen, key)
}

// restoreLocked puts back key's record as it was before a failed Save.
func (p *Pins) restoreLocked(key string, old Record, had bool) {
	if had {
		p.putLocked(key, old)
	} else {
		p.deleteLocked(key)
	}
}

// loadLocked reads the store once; a failure is tried again on next use.
func (p *Pins) loadLocked(ctx context.Context) error {
	if p.loaded {
		return nil
	}
	recs, err := p.store.Load(ctx)
	if err != nil {
		return err
	}
	if recs == nil {
		recs = map[string]Record{}
	}
	p.recs, p.seen, p.kept = recs, map[string][32]byte{}, 0
	for _, r := range recs {
		p.kept += len(r.Tool)
	}
	p.loaded = true
	return nil
}
