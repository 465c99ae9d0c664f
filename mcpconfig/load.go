package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
)

// maxFileSize bounds what is read of one config file (~/.claude.json
// grows with the projects Claude Code has seen; a project's .mcp.json
// comes with a cloned repository).
var maxFileSize int64 = 64 << 20

// FileError is a config file that could not be read or parsed.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string {
	var pe *fs.PathError
	if errors.As(e.Err, &pe) && pe.Path == e.Path {
		return e.Err.Error() // names the file already
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// Load reads every location in order and returns their entries, each
// file's names sorted. A name defined again later is marked Shadowed: the
// first definition is the one used. A file that does not exist is skipped
// unless Required; a file that cannot be read or parsed is a *FileError in
// the second result, and the others are still read.
func (p Places) Load(locs []Location) ([]Entry, []error) {
	var all []Entry
	var problems []error
	seen := map[string]bool{}
	for _, loc := range locs {
		entries, err := p.read(loc)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && !loc.Required {
				continue
			}
			problems = append(problems, err)
			continue
		}
		for _, e := range entries {
			e.Shadowed = seen[e.Name]
			seen[e.Name] = true
			all = append(all, e)
		}
	}
	return all, problems
}

// read reads and parses one file.
func (p Places) read(loc Location) ([]Entry, error) {
	f, err := os.Open(loc.Path)
	if err != nil {
		return nil, &FileError{loc.Path, err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, &FileError{loc.Path, err}
	}
	if int64(len(data)) > maxFileSize {
		return nil, &FileError{loc.Path, fmt.Errorf("larger than %d MiB, the most a config file may be", maxFileSize>>20)}
	}
	entries, err := p.parse(data, loc)
	if err != nil {
		return nil, &FileError{loc.Path, err}
	}
	return entries, nil
}

// parse decodes one document (JSON with comments and trailing commas) and
// returns the entries of loc's parts.
func (p Places) parse(data []byte, loc Location) ([]Entry, error) {
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
		Imports json.RawMessage `json:"imports"` // mcporter's
		Schema  string          `json:"$schema"`
	}
	if err := json.Unmarshal(stripJSONC(data), &doc); err != nil {
		return nil, err
	}
	keys := loc.keys
	if keys == nil {
		keys = allKeys
	}
	// A file of mcporter's, or one that says it is (its "imports" list,
	// its schema), holds entries in mcporter's form.
	mcporter := loc.mcporter || doc.Imports != nil || strings.Contains(doc.Schema, "mcporter")
	var out []Entry
	for _, key := range keys {
		var m map[string]json.RawMessage
		format := key
		switch key {
		case keyLocal:
			m, format = doc.Projects[p.Cwd].MCPServers, FormatLocal
		case keyMCPServers:
			m = doc.MCPServers
		case keyServers:
			m = doc.Servers
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			out = append(out, decodeEntry(name, m[name], loc, p.Home, format, mcporter && key == keyMCPServers))
		}
	}
	return out, nil
}

// NotFoundError is a server name no config file defines.
type NotFoundError struct {
	Name string
	// Known are the names that are defined (the first definition of each),
	// in search order: for a "did you mean".
	Known []string
	// Problems are the files that could not be read: the name may be in
	// one of them.
	Problems []error
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no server named %q in the config files", e.Name)
	if n := len(e.Problems); n > 0 {
		msg += fmt.Sprintf(" (%d could not be read)", n)
	}
	return msg
}

// Find looks name up along locs and returns its first definition, which
// may be Disabled (the caller decides). An entry that cannot be used is
// returned with an *EntryError. When no file defines name, the error is
// the *FileError of a Required location that failed, else a
// *NotFoundError.
func (p Places) Find(locs []Location, name string) (Entry, error) {
	entries, problems := p.Load(locs)
	var known []string
	for _, e := range entries {
		if e.Shadowed {
			continue
		}
		if e.Name == name {
			if e.Problem != "" {
				return e, &EntryError{Server: name, File: e.Source, Err: errors.New(e.Problem)}
			}
			return e, nil
		}
		known = append(known, e.Name)
	}
	var required []error
	for _, err := range problems {
		var fe *FileError
		if errors.As(err, &fe) && slices.ContainsFunc(locs, func(l Location) bool { return l.Required && l.Path == fe.Path }) {
			required = append(required, err)
		}
	}
	switch len(required) {
	case 0:
	case 1:
		return Entry{}, required[0]
	default:
		return Entry{}, errors.Join(required...)
	}
	return Entry{}, &NotFoundError{Name: name, Known: known, Problems: problems}
}
