//go:build !unix

package testservers

import "syscall"

// newSession: there are no sessions to escape to here.
func newSession() *syscall.SysProcAttr { return nil }
