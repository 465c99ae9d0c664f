package pin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Record is a pinned tool: its fingerprint, the canonical JSON of the
// members fingerprinted (nil when too large to keep: Limits), and when it
// was approved.
type Record struct {
	Fingerprint string          `json:"fingerprint"`
	Tool        json.RawMessage `json:"tool,omitempty"`
	Approved    time.Time       `json:"approved"`
}

// Store keeps the records of a Pins, by key. Load is called once, on
// first use; Save after each change, with every record. Save must not
// keep the map it is given, and Load's map is the caller's. A Pins calls
// them one at a time.
type Store interface {
	Load(ctx context.Context) (map[string]Record, error)
	Save(ctx context.Context, records map[string]Record) error
}

// Memory returns a Store that keeps the records in memory: for tests, and
// for a process that trusts every tool afresh each time it starts.
func Memory() Store { return &memory{} }

type memory struct {
	mu   sync.Mutex
	recs map[string]Record
}

func (m *memory) Load(context.Context) (map[string]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.recs), nil
}

func (m *memory) Save(_ context.Context, recs map[string]Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = maps.Clone(recs)
	return nil
}

// MaxFileSize is the largest pin file File reads or writes: a larger one
// is an error, never read in part.
const MaxFileSize = 64 << 20

// File returns a Store that keeps the records in a JSON file at path.
// A missing file holds no records. Save writes a temporary file beside
// it (mode 0600) and renames it over path, so that a crash leaves the old
// file or the new one, never half of one; it creates path's directory
// (mode 0700) if need be.
func File(path string) Store { return &file{path: path} }

type file struct{ path string }

// fileFormat is the pin file: a version, for the day the format changes,
// and the records by key.
type fileFormat struct {
	Version int               `json:"version"`
	Pins    map[string]Record `json:"pins"`
}

func (f *file) Load(ctx context.Context) (map[string]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fh, err := os.Open(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Record{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the pin file: %w", err)
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil && fi.Size() > MaxFileSize {
		return nil, fileTooLarge(f.path)
	}
	b, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the pin file %s: %w", f.path, err)
	}
	if len(b) > MaxFileSize {
		return nil, fileTooLarge(f.path)
	}
	var v struct{ Version int }
	if json.Unmarshal(b, &v) == nil && v.Version != 1 {
		return nil, fmt.Errorf("the pin file %s is of version %d; this program reads version 1", f.path, v.Version)
	}
	var ff fileFormat
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ff); err != nil {
		return nil, fmt.Errorf("the pin file %s is not a pin file: %v", f.path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("the pin file %s is not a pin file: more after its JSON object", f.path)
	}
	for k, r := range ff.Pins {
		if !validFingerprint(r.Fingerprint) {
			return nil, fmt.Errorf("the pin file %s is not a pin file: the fingerprint of %s is %q", f.path, quoteKey(k), truncate(r.Fingerprint, 80))
		}
	}
	if ff.Pins == nil {
		ff.Pins = map[string]Record{}
	}
	return ff.Pins, nil
}

func fileTooLarge(path string) error {
	return fmt.Errorf("the pin file %s is over %d MiB: refused, not read in part", path, MaxFileSize>>20)
}

// validFingerprint reports whether s is a fingerprint of this Version.
func validFingerprint(s string) bool {
	hexPart, ok := strings.CutPrefix(s, Version+":")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (f *file) Save(ctx context.Context, recs map[string]Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fileFormat{Version: 1, Pins: recs}); err != nil {
		return fmt.Errorf("writing the pin file %s: %w", f.path, err)
	}
	if buf.Len() > MaxFileSize {
		return fmt.Errorf("writing the pin file %s: %d bytes, over the %d MiB a pin file may hold", f.path, buf.Len(), MaxFileSize>>20)
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("writing the pin file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.path)+".*")
	if err != nil {
		return fmt.Errorf("writing the pin file: %w", err)
	}
	_, err = tmp.Write(buf.Bytes())
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the pin file %s: %w", f.path, err)
	}
	return nil
}
