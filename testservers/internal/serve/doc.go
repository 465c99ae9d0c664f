// Package serve holds what every HTTP test server of this module needs
// and no host does: a counter of the requests a server got, and a Close
// that cannot hang on a client that holds its connection.
package serve
