// Package ladder runs the negotiation that package negotiate describes:
// it sends the opening requests the protocol layer built (Hello), hands
// back the live transport with the answer (Result), and fills a
// negotiate.Report with every attempt.
//
// Dial is the one door for client.Dial: a Target, a URL or a command
// (which it starts, and starts again when the probe left it refusing
// initialize), in; a live transport, its era and a Report out. Connect is
// the ladder over HTTP. Handshake runs the probe over a host's own
// transport (client.Open), where there are no HTTP statuses.
//
// It is internal because only package client calls it: the policies, the
// cache, the report and the errors that hosts use are in negotiate.
package ladder
