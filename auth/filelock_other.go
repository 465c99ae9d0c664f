//go:build !unix

package auth

import "context"

// lockFile holds nothing off where flock(2) is missing: there, FileStore
// keeps other processes' changes apart only by its atomic writes (the last
// rename wins), and LockTokens excludes only this process's other users.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
