package oauthserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// refuseQuoting answers a token request 400 invalid_grant, quoting the
// whole request back (its form already parsed): every header, the form
// as sent, and each field decoded in error_description; the form in
// error_uri. A careless authorization server does as much, and a client
// must show none of what it sent.
func refuseQuoting(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot grant %s %s: ", r.Method, r.URL.Path)
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s; ", k, strings.Join(r.Header[k], ", "))
	}
	form := r.PostForm.Encode()
	fmt.Fprintf(&b, "body %s;", form)
	fields := make([]string, 0, len(r.PostForm))
	for k := range r.PostForm {
		fields = append(fields, k)
	}
	slices.Sort(fields)
	for _, k := range fields {
		fmt.Fprintf(&b, " %s=%s", k, strings.Join(r.PostForm[k], ","))
	}
	writeJSON(w, http.StatusBadRequest, map[string]string{
		"error":             "invalid_grant",
		"error_description": b.String(),
		"error_uri":         "https://errors.example/why?" + form,
	})
}
