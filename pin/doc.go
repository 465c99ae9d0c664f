// Package pin holds tools to the definitions a person or a policy
// approved, so that a server cannot change a tool under its users' feet:
// a description rewritten to instruct the model, a parameter added, a
// destructive tool that now says it only reads.
//
// Fingerprint reduces a tool definition, as the server sent it, to a
// fingerprint of what a model and a user see of it (its name, title,
// description, schemas and annotations), whatever the key order, white
// space or escapes. A Pins keeps one approved fingerprint per key, in a
// Store (Memory, or a File):
//
//	p := pin.New(pin.File(path))
//	v, err := p.Check(ctx, "files/read_file", raw)
//
// Trust is on first use: the first definition seen under a key is pinned
// and approved (First). The same definition passes (Same). A different
// one is a *ChangedError that lists what changed (description, a
// schema's paths); the tool is held back until Approve pins the new
// definition. Filter applies Check to a whole listing, as a gateway
// does before it lists tools, and fleet.WithPins makes a fleet's
// catalogue do the same.
//
// A Pins is bounded (Limits): the records, and the definitions kept to
// say what changed. The guide is docs/pinning.md in the repository.
package pin
