// Package errtext holds no code: its test keeps Go package names out of
// the library's error messages (errtext_test.go). An error names the
// protocol, the transport ("Streamable HTTP", "HTTP+SSE", "stdio"), the
// method or the URL that failed, never a package such as "modern:".
package errtext
