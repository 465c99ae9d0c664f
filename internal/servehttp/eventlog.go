package servehttp

import (
	"strconv"
	"strings"
)

// Default bounds of an EventLog.
const (
	DefaultLogEvents = 1024
	DefaultLogBytes  = 32 << 20
)

// Event is one kept event of a stream: its sequence number and data.
type Event struct {
	Seq  int
	Data []byte
}

// EventLog keeps the events of one resumable stream (revisions 2025-03-26
// to 2025-11-25) so that a GET with Last-Event-ID replays what followed.
// Event ids are "<stream>-<seq>": the stream's id, and the event's
// number in it from 1. The log keeps at most maxEvents events and
// maxBytes of data: the oldest go first, the newest is always kept, so a
// resumption from an old id may find a gap. Callers lock.
type EventLog struct {
	stream    string
	maxEvents int
	maxBytes  int
	events    []Event
	bytes     int
	seq       int
}

// NewEventLog returns an empty log of stream; bounds <= 0 take the
// defaults.
func NewEventLog(stream string, maxEvents, maxBytes int) *EventLog {
	if maxEvents <= 0 {
		maxEvents = DefaultLogEvents
	}
	if maxBytes <= 0 {
		maxBytes = DefaultLogBytes
	}
	return &EventLog{stream: stream, maxEvents: maxEvents, maxBytes: maxBytes}
}

// Stream returns the stream's id.
func (l *EventLog) Stream() string { return l.stream }

// Last returns the number of the last event appended (0: none yet).
func (l *EventLog) Last() int { return l.seq }

// Bytes returns the size of the data kept.
func (l *EventLog) Bytes() int { return l.bytes }

// Len returns the number of events kept.
func (l *EventLog) Len() int { return len(l.events) }

// ID returns the id of event seq.
func (l *EventLog) ID(seq int) string { return EventID(l.stream, seq) }

// Append keeps data as the next event and returns its number and how many
// older events it pushed out of the bounds.
func (l *EventLog) Append(data []byte) (seq, dropped int) {
	l.seq++
	l.events = append(l.events, Event{l.seq, data})
	l.bytes += len(data)
	for len(l.events)-dropped > 1 && (len(l.events)-dropped > l.maxEvents || l.bytes > l.maxBytes) {
		l.bytes -= len(l.events[dropped].Data)
		dropped++
	}
	if dropped > 0 {
		clear(l.events[:dropped])
		l.events = l.events[dropped:]
	}
	return l.seq, dropped
}

// After returns the kept events numbered above seq, oldest first, and
// gap: whether some of those were dropped already. The slice is the
// log's own: read it before the next Append.
func (l *EventLog) After(seq int) (events []Event, gap bool) {
	if len(l.events) == 0 {
		return nil, seq < l.seq
	}
	first := l.events[0].Seq
	if seq < first {
		return l.events, seq+1 < first
	}
	return l.events[min(seq-first+1, len(l.events)):], false
}

// Reset forgets the kept events; numbering goes on.
func (l *EventLog) Reset() {
	clear(l.events)
	l.events, l.bytes = nil, 0
}

// EventID returns the id of event seq of stream.
func EventID(stream string, seq int) string { return stream + "-" + strconv.Itoa(seq) }

// ParseEventID splits an event id "<stream>-<seq>", as a client sends it
// back in Last-Event-ID (surrounding spaces and tabs ignored).
func ParseEventID(id string) (stream string, seq int, ok bool) {
	id = strings.Trim(id, " \t")
	i := strings.LastIndexByte(id, '-')
	if i <= 0 || i == len(id)-1 {
		return "", 0, false
	}
	for _, c := range []byte(id[i+1:]) {
		if c < '0' || c > '9' {
			return "", 0, false
		}
	}
	seq, err := strconv.Atoi(id[i+1:])
	if err != nil {
		return "", 0, false
	}
	return id[:i], seq, true
}
