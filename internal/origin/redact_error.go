package origin

import (
	"net/url"
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

// RedactError returns err, the error of a request as net/http's Client.Do
// or url.Parse returns it, as it may be shown to the host or logged: a
// *url.Error (a request that got no answer — a dropped connection, a
// timeout, a refused redirect — or a URL that does not parse) names the
// URL with its query, which may hold an api key or the session id of an
// HTTP+SSE server; the result is a copy whose URL is as RedactString
// writes it, its Op, its Err (itself redacted, if a *url.Error) and so what
// errors.Is and errors.As find in it kept. For a URL that does not parse,
// the reason url.Parse gives is shown without the piece of the URL it
// quotes (`invalid port "…" after host`): that piece may be the head of a
// password that holds a "/". Any other err, nil included, is
// returned as it is: call it where the request is sent, before the error
// is wrapped.
func RedactError(err error) error {
	ue, ok := err.(*url.Error)
	if !ok {
		return err
	}
	red, inner := RedactString(ue.URL), RedactError(ue.Err)
	if red == unparsable {
		inner = hideQuoted(inner)
	}
	if red == ue.URL && inner == ue.Err {
		return err
	}
	c := *ue
	c.URL, c.Err = red, inner
	return &c
}

// hideQuoted returns err, url.Parse's reason for refusing a URL, as one
// that reads the same but for what it quotes of the URL: a "/", "?" or "#"
// in a password ends the authority there, and url.Parse then quotes the
// password's head as the port (`invalid port ":pa55" after host`); an
// invalid escape it quotes may be part of a password too. A *url.Error, an
// error already hidden, and one that quotes nothing are returned as they
// are.
func hideQuoted(err error) error {
	switch err.(type) {
	case nil, *url.Error, quoteHidden:
		return err
	}
	s := err.Error()
	if i, j := strings.IndexByte(s, '"'), strings.LastIndexByte(s, '"'); i < 0 || j == i {
		return err
	}
	return quoteHidden{err}
}

// quoteHidden is an error shown without what it quotes.
type quoteHidden struct{ err error }

func (q quoteHidden) Error() string {
	s := q.err.Error()
	i, j := strings.IndexByte(s, '"'), strings.LastIndexByte(s, '"')
	return s[:i+1] + "…" + s[j:]
}

func (q quoteHidden) Unwrap() error { return q.err }
