// Package reqmeta holds the request metadata of revision 2026-07-28: a
// Streamable HTTP POST mirrors the request's revision, method and name
// (params.name or params.uri) into headers, and the values of tool
// parameters annotated x-mcp-header into Mcp-Param-{Name} headers, so that
// intermediaries can route on them without reading the body. The protocol
// layer builds them (Headers, ParamHeaders, AddParamHeaders) and hands them
// to the transport on the request's context (With, From).
package reqmeta
