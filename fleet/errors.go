package fleet

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
)

// The kinds of ServerError.
const (
	KindDisabled    = "disabled"    // the server is configured off
	KindTimeout     = "timeout"     // no answer within the server's connect timeout
	KindRefused     = "refused"     // an HTTP 4xx/5xx, or initialize refused
	KindUnreachable = "unreachable" // the dial or the spawn failed
	KindAuth        = "auth"        // authorization needed or refused
	KindProtocol    = "protocol"    // what answered is not an MCP server
	KindClosed      = "closed"      // the fleet was closed, or the connection ended
	KindHeld        = "held"        // tools held back by WithPins; the server's others are listed
)

// ErrClosed is returned by a Fleet's methods after Close. It also matches
// client.ErrClosed and jsonrpc.ErrClosed: a host that closed a fleet, a
// Conn or a transport tests errors.Is(err, jsonrpc.ErrClosed) once.
var ErrClosed error = fleetClosed{}

// fleetClosed is ErrClosed: its own text, and errors.Is matches the
// client's and the transport's close too.
type fleetClosed struct{}

func (fleetClosed) Error() string { return "fleet closed" }

// Is matches client.ErrClosed and jsonrpc.ErrClosed.
func (fleetClosed) Is(target error) bool {
	return target == client.ErrClosed || target == jsonrpc.ErrClosed
}

// ServerError says why one server is not in a catalogue or could not take
// a call. Kind is one of the Kind… constants; Err is the cause, as the
// client package reported it. With KindHeld, the tools WithPins held
// back are missing: Err unwraps (Unwrap() []error) to one
// *pin.ChangedError or *pin.NotPinnedError per tool, or is the error of
// the pins' Store, which holds back all of the server's tools.
type ServerError struct {
	Server string
	Kind   string
	Err    error
}

func (e *ServerError) Error() string {
	if e.Err == nil {
		return "server " + e.Server + ": " + e.Kind
	}
	return "server " + e.Server + ": " + e.Kind + ": " + e.Err.Error()
}

func (e *ServerError) Unwrap() error { return e.Err }

// heldTools is the Err of a KindHeld ServerError: one *pin.ChangedError
// or *pin.NotPinnedError per tool held back.
type heldTools []error

// maxHeldShown is how many held tools a KindHeld error's text names.
const maxHeldShown = 5

// Error names the first maxHeldShown tools and counts the rest: a server
// that changed every tool does not make an error of unbounded length.
func (h heldTools) Error() string {
	parts := make([]string, 0, min(len(h), maxHeldShown)+1)
	for _, e := range h[:min(len(h), maxHeldShown)] {
		parts = append(parts, e.Error())
	}
	if len(h) > maxHeldShown {
		parts = append(parts, "and "+strconv.Itoa(len(h)-maxHeldShown)+" more tools held back")
	}
	return strings.Join(parts, "; ")
}

func (h heldTools) Unwrap() []error { return h }

// UnknownToolError is the error of CallTool (and GetPrompt) for a fleet
// name that is not in the catalogue.
type UnknownToolError struct{ Name string }

func (e *UnknownToolError) Error() string { return "no tool named " + e.Name + " in the fleet" }

// serverError types err, the failure of dialling, listing or calling
// server.
func serverError(server string, err error) *ServerError {
	if se, ok := errors.AsType[*ServerError](err); ok {
		return se
	}
	return &ServerError{Server: server, Kind: kindOf(err), Err: err}
}

// authPkg is the package whose errors all mean "authorization failed".
const authPkg = "github.com/anymcp/anymcp/auth"

// kindOf reads the kind of a failure from the client's typed errors.
func kindOf(err error) string {
	switch {
	case errors.Is(err, ErrClosed), errors.Is(err, client.ErrClosed):
		return KindClosed
	case anyInChain(err, func(e error) bool {
		t := reflect.TypeOf(e)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return t != nil && t.PkgPath() == authPkg
	}):
		return KindAuth
	}
	if he, ok := errors.AsType[*jsonrpc.HTTPError](err); ok {
		if he.StatusCode == 401 || he.StatusCode == 403 {
			return KindAuth
		}
		if he.StatusCode >= 400 {
			return KindRefused
		}
		return KindProtocol
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, client.ErrTimeout):
		return KindTimeout
	}
	if _, ok := errors.AsType[*negotiate.NewerServerError](err); ok {
		return KindRefused
	}
	if _, ok := errors.AsType[*client.HandshakeError](err); ok {
		if _, ok := errors.AsType[*jsonrpc.Error](err); ok {
			return KindRefused
		}
		if _, ok := errors.AsType[*client.VersionError](err); ok {
			return KindRefused
		}
		return KindProtocol
	}
	if _, ok := errors.AsType[*jsonrpc.DecodeError](err); ok {
		return KindProtocol
	}
	if _, ok := errors.AsType[*client.ResultError](err); ok {
		return KindProtocol
	}
	if _, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return KindRefused
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return KindUnreachable
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return KindUnreachable
	}
	if _, ok := errors.AsType[*exec.Error](err); ok {
		return KindUnreachable
	}
	if _, ok := errors.AsType[*os.PathError](err); ok {
		return KindUnreachable
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return KindUnreachable
	}
	if _, ok := errors.AsType[*negotiate.Error](err); ok {
		return KindProtocol // every attempt answered, none as MCP
	}
	return KindUnreachable
}

// anyInChain reports whether match holds for err or any error it wraps.
func anyInChain(err error, match func(error) bool) bool {
	if err == nil {
		return false
	}
	if match(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return anyInChain(u.Unwrap(), match)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if anyInChain(e, match) {
				return true
			}
		}
	}
	return false
}
