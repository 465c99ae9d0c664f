package client

import (
	"container/list"
	"strings"

	"github.com/anymcp/anymcp/internal/reqmeta"
	"github.com/anymcp/anymcp/mcp"
)

// What the Conn remembers of the tools tools/list described: whether a
// tool is safe to repeat (its annotations say readOnlyHint or
// idempotentHint; see WithReplay), which of its parameters go into
// Mcp-Param-* headers (x-mcp-header, stateless revisions over Streamable
// HTTP), and whether it runs as a task (its execution.taskSupport,
// revision 2025-11-25: tasks.go). A tool with none of these is not
// remembered at all.
//
// The server chooses how many tools it lists and how long their names
// are, so the notes are bounded: at most maxToolNotes tools and
// maxToolNoteBytes (names and parameter headers, with a fixed overhead
// counted for each tool and each parameter). Past a bound the tool listed
// longest ago is forgotten first; a tool whose note alone is over
// maxToolNoteBytes is not remembered. A forgotten tool is as one never
// listed: a call to it is not sent again when its answer is lost, and on
// Streamable HTTP in a stateless revision it goes out without its Mcp-Param-*
// headers, which a server that checks them refuses with -32020
// (HeaderMismatch) before it runs the tool: the Conn then lists the tools
// again and sends the call once more (relistHeaders). A tool listed again
// is remembered again. The first tool forgotten is logged.
//
// A listing that starts again from its first page does not start the notes
// afresh: a host may fetch the first page again and then call a tool it
// found on a later one, and two listings may run at once.
//
// notifications/tools/list_changed makes the Conn forget which tools were
// safe to repeat (forgetSafety): a tool that was read-only may not be any
// more, and a call to it is not sent twice on the word of the old listing,
// nor on that of a listing asked for before the notification and
// answered after it (gen).
// It is sent again after a lost answer once a new listing says so. Header
// parameters and task support are kept: a stale one costs a call refused
// (-32020, then a listing; -32601), not a call run twice. A
// re-initialization keeps the notes: it is the same
// server, and a call whose answer the expired session lost is replayed
// after it (TestReplayOnlyWhatIsSafe).
const (
	// maxToolNotes is far more tools than a server lists in practice
	// that are marked safe to repeat or that have header parameters.
	maxToolNotes = 4096
	// maxToolNoteBytes gives each of maxToolNotes tools about 1 KiB for
	// its name, its parameters and the overhead.
	maxToolNoteBytes = 4 << 20
	// toolNoteOverhead and paramNoteOverhead are what a note costs
	// besides its strings: map entry, list element, the note itself, and
	// each ParamHeader with its path slice. They are estimates that keep
	// empty names from being free.
	toolNoteOverhead  = 128
	paramNoteOverhead = 64
)

// toolNotes are the notes, in the order the tools were last listed. The
// Conn's mu guards them.
type toolNotes struct {
	byName map[string]*list.Element // each holding a *toolNote
	order  list.List                // listed longest ago first
	bytes  int                      // the sizes of the notes held
	forgot bool                     // a tool was forgotten for want of room
	gen    uint64                   // counts forgetSafety: a listing asked for before one is stale
}

type toolNote struct {
	name   string
	safe   bool
	params []reqmeta.ParamHeader
	task   string // mcp.TaskSupportRequired or mcp.TaskSupportOptional, or ""
	size   int
}

// set records what a listing said of the tool name, replacing what an
// earlier one said, and reports whether a tool had to be forgotten (or
// this one could not be remembered) for want of room.
func (n *toolNotes) set(name string, safe bool, params []reqmeta.ParamHeader, task string) (forgot bool) {
	n.remove(name)
	if task != mcp.TaskSupportRequired && task != mcp.TaskSupportOptional {
		task = ""
	}
	if !safe && len(params) == 0 && task == "" {
		return false
	}
	size := noteSize(name, params)
	if size > maxToolNoteBytes {
		return true
	}
	for n.order.Len() >= maxToolNotes || n.bytes+size > maxToolNoteBytes {
		n.remove(n.order.Front().Value.(*toolNote).name)
		forgot = true
	}
	if n.byName == nil {
		n.byName = make(map[string]*list.Element)
	}
	name = strings.Clone(name) // not the listing's bytes around it: only what is counted
	n.byName[name] = n.order.PushBack(&toolNote{name: name, safe: safe, params: params, task: task, size: size})
	n.bytes += size
	return forgot
}

func (n *toolNotes) remove(name string) {
	e, ok := n.byName[name]
	if !ok {
		return
	}
	n.bytes -= e.Value.(*toolNote).size
	n.order.Remove(e)
	delete(n.byName, name)
}

// forgetSafety forgets which tools were listed as safe to repeat, and the
// notes that held nothing else.
func (n *toolNotes) forgetSafety() {
	n.gen++
	for e := n.order.Front(); e != nil; {
		next := e.Next()
		if note := e.Value.(*toolNote); len(note.params) == 0 && note.task == "" {
			n.remove(note.name)
		} else {
			note.safe = false
		}
		e = next
	}
}

// safe reports whether the tool name was listed as safe to repeat.
func (n *toolNotes) safe(name string) bool {
	e, ok := n.byName[name]
	return ok && e.Value.(*toolNote).safe
}

// params returns the header parameters the tool name was listed with.
func (n *toolNotes) params(name string) []reqmeta.ParamHeader {
	if e, ok := n.byName[name]; ok {
		return e.Value.(*toolNote).params
	}
	return nil
}

// taskSupport returns how the tool name runs as a task, as it was listed:
// mcp.TaskSupportRequired, mcp.TaskSupportOptional, or "" (never, or not
// known).
func (n *toolNotes) taskSupport(name string) string {
	if e, ok := n.byName[name]; ok {
		return e.Value.(*toolNote).task
	}
	return ""
}

// known reports whether the Conn holds a note on the tool name.
func (n *toolNotes) known(name string) bool {
	_, ok := n.byName[name]
	return ok
}

// noteSize is what the note of a tool is counted as.
func noteSize(name string, params []reqmeta.ParamHeader) int {
	size := toolNoteOverhead + len(name)
	for _, p := range params {
		size += paramNoteOverhead + len(p.Name) + len(p.Type)
		for _, key := range p.Path {
			size += 16 + len(key)
		}
	}
	return size
}
