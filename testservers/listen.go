package testservers

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// listenFilter is the notifications filter of subscriptions/listen.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs are the tasks of the extension whose notifications/tasks
	// the subscription gets (Options.Tasks.StatusNotifications).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// wants reports whether the filter asked for a list_changed method.
func (f listenFilter) wants(method string) bool {
	switch method {
	case "notifications/tools/list_changed":
		return f.ToolsListChanged
	case "notifications/prompts/list_changed":
		return f.PromptsListChanged
	case "notifications/resources/list_changed":
		return f.ResourcesListChanged
	}
	return false
}

// listener is one running subscriptions/listen request: what it accepted
// and how its notifications reach its stream.
type listener struct {
	ss     *Session
	ctx    context.Context // the request's: messages sent under it go on its stream
	id     jsonrpc.ID
	filter listenFilter
	// mu serializes the subscription's messages; it is held from the
	// registration to the acknowledgement, so nothing comes before it.
	mu   sync.Mutex
	stop chan struct{} // closed to end the subscription gracefully
	once sync.Once
	gone chan struct{} // closed once the request is over, its answer sent
}

func (l *listener) end() { l.once.Do(func() { close(l.stop) }) }

// meta is the _meta that tags the subscription's messages.
func (l *listener) meta() map[string]json.RawMessage {
	return map[string]json.RawMessage{mcp.MetaSubscriptionID: json.RawMessage(l.id.Raw())}
}

// send sends one notification of the subscription, tagged.
func (l *listener) send(method string, params map[string]any) error {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = l.meta()
	return l.ss.notify(l.ctx, method, params)
}

// errNoResponse ends a request whose handler answered it itself, or
// that gets no answer.
var errNoResponse = errors.New("test server: no response")

// accept returns the part of f the server honours: every kind except
// those of Options.ListenRefuse, the resource URIs it knows (each once)
// and, with Options.Tasks.StatusNotifications, the ids of the tasks it
// keeps.
func (s *Server) accept(f listenFilter) listenFilter {
	refused := func(field string) bool { return slices.Contains(s.opts.ListenRefuse, field) }
	out := listenFilter{
		ToolsListChanged:     f.ToolsListChanged && !refused("toolsListChanged"),
		PromptsListChanged:   f.PromptsListChanged && !refused("promptsListChanged"),
		ResourcesListChanged: f.ResourcesListChanged && !refused("resourcesListChanged"),
	}
	if !refused("resourceSubscriptions") {
		for _, uri := range f.ResourceSubscriptions {
			if knownResource(uri) && !slices.Contains(out.ResourceSubscriptions, uri) {
				out.ResourceSubscriptions = append(out.ResourceSubscriptions, uri)
			}
		}
	}
	if s.opts.Tasks.Enabled && s.opts.Tasks.StatusNotifications && !refused("taskIds") {
		out.TaskIDs = s.acceptTaskIDs(f.TaskIDs)
	}
	return out
}

// knownResource reports whether a stateless read of uri can succeed.
func knownResource(uri string) bool {
	if uri == NonASCIIResourceURI || uri == SecretResourceURI {
		return true
	}
	_, ok := lookupResource(uri)
	return ok
}

// listen serves subscriptions/listen: it acknowledges the filter it
// accepts, then carries the notifications asked for until the client
// goes (no answer) or the server ends the subscription (a result, or with
// Options.ListenEndWithCancelled notifications/cancelled). Asking for
// taskIds without the tasks extension is -32021 (with Options.Tasks).
func (ss *Session) listen(ctx context.Context, m *jsonrpc.Message, rq *reqInfo) (any, error) {
	var p struct {
		Notifications *listenFilter `json:"notifications"`
	}
	if err := decodeParams(m.Params, &p); err != nil {
		return nil, err
	}
	if p.Notifications == nil {
		return nil, invalidParams("subscriptions/listen: notifications is required")
	}
	s := ss.srv
	if len(p.Notifications.TaskIDs) > 0 && s.opts.Tasks.Enabled && !hasTasksExtension(rq) {
		return nil, missingTasksExtension()
	}
	l := &listener{
		ss: ss, ctx: ctx, id: m.ID, filter: s.accept(*p.Notifications),
		stop: make(chan struct{}), gone: make(chan struct{}),
	}
	l.mu.Lock()
	s.mu.Lock()
	s.listeners[l] = struct{}{}
	s.st.ListenStreams++
	s.changedLocked()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.changedLocked()
		s.mu.Unlock()
		close(l.gone)
	}()
	filter, _ := json.Marshal(l.filter)
	err := l.send("notifications/subscriptions/acknowledged", map[string]any{"notifications": json.RawMessage(filter)})
	l.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errNoResponse // the stream is gone
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.stop:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s.count(func(st *Stats) { st.ListenEnded++ })
	if s.opts.ListenEndWithCancelled {
		_ = ss.notify(ctx, "notifications/cancelled", mcp.CancelledParams{
			RequestID: json.RawMessage(m.ID.Raw()), Reason: "the server ended the subscription",
		})
		_ = ss.peer.Reply(ctx, m.ID, nil)
		return nil, errNoResponse
	}
	meta, _ := json.Marshal(l.meta())
	res, err := s.withResultFields(json.RawMessage(`{"_meta":`+string(meta)+`}`), map[string]any{"resultType": mcp.ResultComplete})
	if err != nil {
		return nil, err
	}
	// Answered here, so that EndSubscriptions knows when it is sent.
	if err := ss.peer.Reply(ctx, m.ID, &jsonrpc.Message{ID: m.ID, Result: res}); err != nil {
		s.log.Debug("subscriptions/listen result not delivered", "id", m.ID.String(), "err", err)
	}
	return nil, errNoResponse
}

// liveListeners returns the running subscriptions, of ss only when not nil.
func (s *Server) liveListeners(ss *Session) []*listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*listener, 0, len(s.listeners))
	for l := range s.listeners {
		if ss == nil || l.ss == ss {
			out = append(out, l)
		}
	}
	return out
}

// notifyListeners sends each list_changed method to the subscriptions
// that asked for it and returns how many notifications went out.
func (s *Server) notifyListeners(methods ...string) int {
	n := 0
	for _, l := range s.liveListeners(nil) {
		for _, method := range methods {
			if !l.filter.wants(method) {
				continue
			}
			l.mu.Lock()
			if l.send(method, nil) == nil {
				n++
			}
			l.mu.Unlock()
		}
	}
	return n
}

// notifyResourceListeners sends notifications/resources/updated for uri
// to the subscriptions that asked for it and returns how many.
func (s *Server) notifyResourceListeners(uri string) int {
	n := 0
	for _, l := range s.liveListeners(nil) {
		if !slices.Contains(l.filter.ResourceSubscriptions, uri) {
			continue
		}
		l.mu.Lock()
		if l.send("notifications/resources/updated", map[string]any{"uri": uri}) == nil {
			n++
		}
		l.mu.Unlock()
	}
	return n
}

// EndSubscriptions ends every running subscriptions/listen request as a
// server shutting down does: each gets its result (graceful closure; with
// Options.ListenEndWithCancelled, notifications/cancelled instead), then
// its stream ends. It returns how many there were, once their answers
// are sent. Closing a front-end does this first.
func (s *Server) EndSubscriptions() int { return s.endSubscriptions(nil) }

// endSubscriptions ends the subscriptions of ss, or all when ss is nil.
func (s *Server) endSubscriptions(ss *Session) int {
	ls := s.liveListeners(ss)
	for _, l := range ls {
		l.end()
	}
	for _, l := range ls {
		<-l.gone
	}
	return len(ls)
}

// sessionNotify sends a notification to every legacy session and returns
// to how many it went.
func (s *Server) sessionNotify(method string, params any) int {
	n := 0
	for _, ss := range s.initializeSessions() {
		if ss.notify(context.Background(), method, params) == nil {
			n++
		}
	}
	return n
}

// NotifyToolsChanged tells every client that the tool list changed:
// notifications/tools/list_changed to each legacy session (over HTTP, on
// its GET stream) and to each subscription that asked for toolsListChanged.
// It returns how many notifications went out.
func (s *Server) NotifyToolsChanged() int {
	return s.sessionNotify("notifications/tools/list_changed", struct{}{}) + s.notifyListeners("notifications/tools/list_changed")
}

// NotifyPromptsChanged is NotifyToolsChanged for the prompt list.
func (s *Server) NotifyPromptsChanged() int {
	return s.sessionNotify("notifications/prompts/list_changed", struct{}{}) + s.notifyListeners("notifications/prompts/list_changed")
}

// NotifyResourcesChanged is NotifyToolsChanged for the resource list.
func (s *Server) NotifyResourcesChanged() int {
	return s.sessionNotify("notifications/resources/list_changed", struct{}{}) + s.notifyListeners("notifications/resources/list_changed")
}

// discover is the result of server/discover: with Options.Tasks, the
// capabilities name the tasks extension.
func (s *Server) discover() any {
	caps := serverCapabilities()
	if s.opts.Tasks.Enabled {
		caps.Extensions = map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage(`{}`)}
	}
	return mcp.DiscoverResult{SupportedVersions: s.supportedVersions(), Capabilities: caps, Instructions: s.opts.Instructions}
}
