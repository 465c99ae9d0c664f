// Package access decides which HTTP clients a server of this module (the
// gateway, the bridge) admits, and which view of the fleet each may see.
//
// A Policy looks at a request before its body is read and returns a Grant
// (a view and a subject) or a refusal. The policies:
//
//   - Loopback: clients on this machine only (remote address, Host and
//     Origin all loopback). The default when nothing else is configured.
//   - Tokens: static bearer tokens, each mapped to a view, compared in
//     constant time; only their hashes are kept.
//   - JWT: access tokens (RFC 9068) signed by an issuer's keys (a JWKS,
//     named or found in the issuer's metadata on its own origin), with
//     iss, aud, exp, nbf, iat and the required scopes checked; a claim or
//     a scope picks the view.
//   - Any: the first of several that admits.
//
// Middleware runs a policy in front of a handler: a refusal is answered
// with 401 or 403 and an RFC 6750 Bearer challenge naming the RFC 9728
// protected-resource metadata, which ResourceMetadata serves; an admitted
// request reaches the handler with its Grant in the context (GrantOf) and
// without its Authorization header, so a client's token cannot travel
// upstream.
//
// A refusal never repeats the credential; tokens are never logged. The
// guide is docs/access.md in the repository.
package access
