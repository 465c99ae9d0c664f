package origin

import (
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// unparsable stands for a URL that does not parse: nothing of it is shown.
const unparsable = "(an unparsable URL)"

// RedactString is Redact for a URL held as a string. A string that does
// not parse as a URL is shown as "(an unparsable URL)", nothing of it: it
// may still hold a password or a key.
func RedactString(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return unparsable
	}
	return Redact(u)
}

// RedactError returns err as it may be shown to the host or logged: every
// *url.Error in its chain names its URL as RedactString writes it. That is
// the error net/http's Client.Do returns for a request that got no answer
// (a dropped connection, a timeout, a refused redirect), and url.Parse's;
// both name the URL with its query, which may hold an api key or the
// session id of an HTTP+SSE server. The library calls it on the error of
// every request it sends, where the *url.Error is the error itself.
//
// An err whose chain holds no such *url.Error is returned as it is, and so
// is nil. A *url.Error is replaced by a copy: its Op and its Err, itself
// redacted, stay, so errors.Is and errors.As find in the result what they
// find in err (context.DeadlineExceeded, a *net.OpError, a
// *jsonrpc.RedirectError), and the copy answers Timeout as the original.
// An error that wraps a *url.Error further down (fmt.Errorf with %w,
// errors.Join) is replaced by an error that shows its text with the URLs
// redacted and wraps the redacted rest of the chain; for errors.Is and
// errors.As it is the error it replaces, which they may therefore return,
// its own text unredacted.
func RedactError(err error) error {
	if err == nil {
		return nil
	}
	var r redactor
	r.collect(err)
	if len(r.pairs) == 0 {
		return err
	}
	return r.rebuild(err)
}

// redactor rebuilds one error chain with the URLs of its *url.Errors
// redacted.
type redactor struct {
	pairs []string // for strings.NewReplacer: a URL as shown, then redacted
}

// collect notes, for every *url.Error of err's chain whose URL is not
// redacted yet, how that URL appears in error text and what replaces it.
func (r *redactor) collect(err error) {
	if ue, ok := err.(*url.Error); ok {
		if red := RedactString(ue.URL); red != ue.URL {
			// url.Error quotes its URL; wrappers may not.
			r.pairs = append(r.pairs, strconv.Quote(ue.URL), strconv.Quote(red), ue.URL, red)
		}
	}
	for _, e := range unwrap(err) {
		r.collect(e)
	}
}

// rebuild returns err with its chain redacted. Errors whose chain holds
// no URL to redact are kept as they are.
func (r *redactor) rebuild(err error) error {
	if err == nil || !r.holds(err) {
		return err
	}
	if ue, ok := err.(*url.Error); ok {
		c := *ue
		c.URL = RedactString(ue.URL)
		c.Err = r.rebuild(ue.Err)
		return &c
	}
	msg := strings.NewReplacer(r.pairs...).Replace(err.Error())
	switch x := err.(type) {
	case interface{ Unwrap() error }:
		return &standIn{node: node{orig: err, msg: msg}, next: r.rebuild(x.Unwrap())}
	case interface{ Unwrap() []error }:
		var next []error
		for _, e := range x.Unwrap() {
			next = append(next, r.rebuild(e))
		}
		return &standIns{node: node{orig: err, msg: msg}, next: next}
	}
	return err // not reached: holds found a *url.Error below err
}

// holds reports whether err's chain holds a *url.Error whose URL is not
// redacted.
func (r *redactor) holds(err error) bool {
	if ue, ok := err.(*url.Error); ok && RedactString(ue.URL) != ue.URL {
		return true
	}
	for _, e := range unwrap(err) {
		if r.holds(e) {
			return true
		}
	}
	return false
}

// unwrap returns the errors err wraps, leaving out nil ones.
func unwrap(err error) []error {
	switch x := err.(type) {
	case interface{ Unwrap() error }:
		if e := x.Unwrap(); e != nil {
			return []error{e}
		}
	case interface{ Unwrap() []error }:
		return slices.DeleteFunc(slices.Clone(x.Unwrap()), func(e error) bool { return e == nil })
	}
	return nil
}

// node stands, in a redacted chain, for an error orig that wraps a
// *url.Error further down: it shows orig's text with the URLs redacted,
// and for errors.Is and errors.As it is orig.
type node struct {
	orig error
	msg  string
}

func (e *node) Error() string { return e.msg }

// Is reports whether orig is target, as errors.Is would have found it
// there: equal, or so by orig's own Is method.
func (e *node) Is(target error) bool {
	if target == nil {
		return false
	}
	if reflect.TypeOf(target).Comparable() && e.orig == target {
		return true
	}
	x, ok := e.orig.(interface{ Is(error) bool })
	return ok && x.Is(target)
}

// As sets target to orig where errors.As would have done so: orig's type
// fits target, or orig's own As method says so.
func (e *node) As(target any) bool {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	if reflect.TypeOf(e.orig).AssignableTo(v.Type().Elem()) {
		v.Elem().Set(reflect.ValueOf(e.orig))
		return true
	}
	x, ok := e.orig.(interface{ As(any) bool })
	return ok && x.As(target)
}

// standIn is the node of an error that wraps one error; next is that
// error, redacted.
type standIn struct {
	node
	next error
}

func (e *standIn) Unwrap() error { return e.next }

// standIns is the node of an error that wraps several (errors.Join, or
// fmt.Errorf with more than one %w); next are those errors, redacted.
type standIns struct {
	node
	next []error
}

func (e *standIns) Unwrap() []error { return e.next }
