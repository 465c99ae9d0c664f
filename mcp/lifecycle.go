package mcp

// Implementation names a client or server program.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// InitializeParams are sent by the client in initialize.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// ClientCapabilities are what the client offers the server.
type ClientCapabilities struct {
	Experimental map[string]raw `json:"experimental,omitempty"`
	Roots        *RootsCap      `json:"roots,omitempty"`
	Sampling     *SamplingCap   `json:"sampling,omitempty"`
	Elicitation  *ElicitCap     `json:"elicitation,omitempty"`
	Tasks        raw            `json:"tasks,omitempty"`
	// Extensions are the extensions of revision 2026-07-28 the client
	// supports, by identifier (ExtensionTasks), each with its settings.
	Extensions map[string]raw `json:"extensions,omitempty"`
}

// RootsCap: the client answers roots/list.
type RootsCap struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCap: the client answers sampling/createMessage.
type SamplingCap struct {
	Context *struct{} `json:"context,omitempty"`
	Tools   *struct{} `json:"tools,omitempty"`
}

// ElicitCap: the client answers elicitation/create, in form and/or URL mode.
// An empty object (neither set) means form mode, for older servers.
type ElicitCap struct {
	Form *struct{} `json:"form,omitempty"`
	URL  *struct{} `json:"url,omitempty"`
}

// ServerCapabilities are what the server offers.
type ServerCapabilities struct {
	Experimental map[string]raw `json:"experimental,omitempty"`
	Logging      *struct{}      `json:"logging,omitempty"`
	Completions  *struct{}      `json:"completions,omitempty"`
	Prompts      *ListChanged   `json:"prompts,omitempty"`
	Resources    *ResourcesCap  `json:"resources,omitempty"`
	Tools        *ListChanged   `json:"tools,omitempty"`
	// Tasks is the tasks capability of revision 2025-11-25.
	Tasks *TasksCap `json:"tasks,omitempty"`
	// Extensions are the extensions of revision 2026-07-28 the server
	// supports, by identifier (ExtensionTasks), each with its settings.
	Extensions map[string]raw `json:"extensions,omitempty"`
}

// HasExtension reports whether the server declared the extension id.
func (c ServerCapabilities) HasExtension(id string) bool {
	_, ok := c.Extensions[id]
	return ok
}

// ListChanged says whether the server sends list_changed notifications.
type ListChanged struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCap describes the server's resources feature.
type ResourcesCap struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	ProgressToken any     `json:"progressToken"`
	Progress      float64 `json:"progress"`
	Total         float64 `json:"total,omitempty"`
	Message       string  `json:"message,omitempty"`
}

// CancelledParams are the params of notifications/cancelled. RequestID is
// the id of the cancelled request as JSON text (a string or a number).
type CancelledParams struct {
	RequestID raw    `json:"requestId"`
	Reason    string `json:"reason,omitempty"`
}

// LoggingLevel is a syslog severity, "debug" to "emergency".
type LoggingLevel string

// The logging levels, least severe first.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

// SetLevelParams are the params of logging/setLevel.
type SetLevelParams struct {
	Level LoggingLevel `json:"level"`
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Level  LoggingLevel `json:"level"`
	Logger string       `json:"logger,omitempty"`
	Data   raw          `json:"data"`
}
