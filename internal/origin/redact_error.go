package origin

import "net/url"

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
// errors.Is and errors.As find in it kept. Any other err, nil included, is
// returned as it is: call it where the request is sent, before the error
// is wrapped.
func RedactError(err error) error {
	ue, ok := err.(*url.Error)
	if !ok {
		return err
	}
	red, inner := RedactString(ue.URL), RedactError(ue.Err)
	if red == ue.URL && inner == ue.Err {
		return err
	}
	c := *ue
	c.URL, c.Err = red, inner
	return &c
}
