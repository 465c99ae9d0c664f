package gateway

import (
	"log/slog"
	"time"

	"github.com/anymcp/anymcp/access"
	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/pin"
)

// Config is what a Gateway serves and how. The zero value serves every
// tool, prompt and resource of the fleet in one default view.
type Config struct {
	// Views are the named subsets served. None: one default view (name
	// "") of the whole fleet. A view named "" is served at /mcp, /sse
	// and on stdio; a view NAME at /mcp/NAME (and /sse/NAME).
	Views []View
	// Approvals gate the tools that need a person's yes.
	Approvals Approvals
	// Pins, when set, fingerprints every tool the first time it is seen
	// and holds back a tool whose definition changed until it is
	// approved again (see package pin and fleet.WithPins).
	Pins *pin.Pins
	// Access decides which HTTP clients are admitted and which view each
	// sees (see package access): a Grant's View serves a client of /mcp
	// that view, and refuses it any other. Nil: access.Loopback.
	Access access.Policy
	// MetadataURL is the protected-resource metadata that Access's
	// refusals name (access.ResourceMetadata.URL); "" names none.
	MetadataURL string
	// Bridge bounds and secures every view's downstream faces. Its
	// AuthToken must be empty when Access is set: Access checks tokens.
	Bridge bridge.Options
	// Fleet are options for the fleet (and each session's own fleet).
	Fleet  []fleet.Option
	Logger *slog.Logger
}

// View is a named subset of the fleet.
type View struct {
	// Name is the view's path segment: ^[A-Za-z0-9_-]{1,64}$, or "" for
	// the default view.
	Name string
	// Allow and Deny select what the view serves. A tool is in the view
	// when it matches a pattern of Allow (or Allow is empty) and none of
	// Deny. A pattern is a path.Match glob over fleet names ("files__*"),
	// "server:GLOB" over server names, or "hint:NAME" for a tool whose
	// annotation NAME (readOnly, destructive, idempotent, openWorld) is
	// true; one not sent takes the specification's default. Prompts and
	// resources follow their server's patterns: only "server:" patterns
	// apply to them (docs/gateway-views.md).
	Allow, Deny []string
	// Rename gives tools other names in this view (fleet name → name,
	// ^[A-Za-z0-9_-]{1,64}$); the fleet name is then unknown here.
	Rename map[string]string
	// Describe replaces tools' descriptions in this view (fleet name →
	// description).
	Describe map[string]string
	// MaxTools, when above 0, is the most tools the view lists; a view
	// with more offers search_tools, describe_tool and call_tool instead.
	MaxTools int
	// OwnNames serves tools and prompts under their servers' own names,
	// not their fleet names (Rename still applies, and wins). A name two
	// tools (or prompts) of the view share fails the listing, naming
	// both. Patterns, Rename and Describe still name fleet names.
	OwnNames bool
}

// Approvals decide which tool calls wait for a person's yes, and what
// happens when no one can be asked.
type Approvals struct {
	// Require are patterns (as View's) of tools that need approval.
	// Tools whose destructiveHint is true need it too, unless
	// SkipDestructive.
	Require         []string
	SkipDestructive bool
	// Default is the decision when the calling client cannot be asked
	// (it declared no elicitation): false denies, true allows.
	Default bool
	// Timeout bounds the wait for the client's answer; default 2 min.
	// No answer in time is a denial.
	Timeout time.Duration
	// OnDecision, when set, is told every decision.
	OnDecision func(Decision)
}

// Decision is one approval decided.
type Decision struct {
	View     string
	Tool     string // fleet name
	Server   string
	Approved bool
	// By says who decided: "client" (asked by elicitation), "policy"
	// (Default), "timeout".
	By string
	At time.Time
}
