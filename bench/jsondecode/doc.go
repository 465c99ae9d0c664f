// Package jsondecode compares JSON decoders on what an MCP client decodes:
// a small tools/call result, a tools/list page with schemas, and a 16 MiB
// text result — encoding/json against github.com/go-json-experiment/json
// (the encoding/json/v2 prototype, usable without GOEXPERIMENT on Go 1.26)
// — and, from an io.Reader as a body gives it, reading the answer whole and
// decoding it (with a copy of every string, or as the library does, the
// big string shared) against decoding straight off the reader with a
// streaming jsontext.Decoder: so that the library's choice rests on
// numbers (see RESULTS.md).
package jsondecode
