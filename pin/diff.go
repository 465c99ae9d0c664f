package pin

import (
	"strconv"
	"strings"
)

// MaxChanges is how many changes a ChangedError lists; the rest are
// counted in its More.
const MaxChanges = 16

// Op says how a value changed.
type Op string

// The ops of a Change.
const (
	Added   Op = "added"
	Removed Op = "removed"
	Changed Op = "changed"
)

// Change is one difference between the definition approved and the one
// listed now. Path is a JSON Pointer (RFC 6901) into the definition:
// "/description", "/inputSchema/properties/path/type". A value of
// another type, or a string, number or literal that differs, is Changed
// where it is; members and array elements are Added or Removed.
type Change struct {
	Path string
	Op   Op
}

// Member is the definition's member the change is in ("description",
// "inputSchema"…).
func (c Change) Member() string {
	m, _, _ := strings.Cut(strings.TrimPrefix(c.Path, "/"), "/")
	return unescapePointer(m)
}

func (c Change) String() string { return c.Path + " " + string(c.Op) }

// differ collects the changes between two trees, the first MaxChanges
// of them in path order, and counts the rest. The path is kept as a
// stack of names and made a string only for a change listed, so that a
// deep tree costs no string per level.
type differ struct {
	changes []Change
	more    int
	path    []string
}

func (d *differ) add(last string, op Op) {
	if len(d.changes) >= MaxChanges {
		d.more++
		return
	}
	var b strings.Builder
	for _, s := range d.path {
		b.WriteByte('/')
		b.WriteString(escapePointer(s))
	}
	b.WriteByte('/')
	b.WriteString(escapePointer(last))
	d.changes = append(d.changes, Change{Path: b.String(), Op: op})
}

// diff walks a and b (the values at d.path) together; its work is
// bounded by their sizes.
func (d *differ) diff(a, b *node) {
	if a.kind != b.kind {
		d.changed()
		return
	}
	switch a.kind {
	case '{':
		i, j := 0, 0
		for i < len(a.names) || j < len(b.names) {
			switch {
			case j == len(b.names) || i < len(a.names) && a.names[i] < b.names[j]:
				d.add(a.names[i], Removed)
				i++
			case i == len(a.names) || b.names[j] < a.names[i]:
				d.add(b.names[j], Added)
				j++
			default:
				d.path = append(d.path, a.names[i])
				d.diff(a.kids[i], b.kids[j])
				d.path = d.path[:len(d.path)-1]
				i++
				j++
			}
		}
	case '[':
		for i := range max(len(a.kids), len(b.kids)) {
			switch {
			case i >= len(b.kids):
				d.add(strconv.Itoa(i), Removed)
			case i >= len(a.kids):
				d.add(strconv.Itoa(i), Added)
			default:
				d.path = append(d.path, strconv.Itoa(i))
				d.diff(a.kids[i], b.kids[i])
				d.path = d.path[:len(d.path)-1]
			}
		}
	default:
		if a.text != b.text {
			d.changed()
		}
	}
}

// changed records the value at d.path as changed.
func (d *differ) changed() {
	if len(d.path) == 0 { // the whole definition: never, both are objects
		d.changes = append(d.changes, Change{Path: "", Op: Changed})
		return
	}
	last := d.path[len(d.path)-1]
	d.path = d.path[:len(d.path)-1]
	d.add(last, Changed)
	d.path = append(d.path, last)
}

var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

func escapePointer(s string) string   { return pointerEscaper.Replace(s) }
func unescapePointer(s string) string { return pointerUnescaper.Replace(s) }
