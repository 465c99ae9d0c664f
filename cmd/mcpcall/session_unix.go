//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// detachedAttr starts the gateway in a session of its own: no terminal,
// no signal of the shell that started it reaches it.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// ensurePrivateDir makes dir (0700) if missing and checks it and its
// parent: dir owned by this user and open to nobody else, the parent
// owned by this user or root and writable by nobody else (unless sticky,
// as /tmp). A socket in dir is then reachable by this user only.
func ensurePrivateDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("sessions directory: %w", err)
	}
	uid := os.Getuid()
	check := func(p string, mask os.FileMode) error {
		// A sticky parent (/tmp) lets nobody else rename or remove dir.
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("sessions directory: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch {
		case !fi.IsDir():
			return fmt.Errorf("sessions directory: %s is not a directory (a symbolic link?)", p)
		case !ok || (int(st.Uid) != uid && (mask == 0o077 || st.Uid != 0)):
			return fmt.Errorf("sessions directory: %s is not owned by you (uid %d)", p, uid)
		case fi.Mode().Perm()&mask != 0 && (mask == 0o077 || fi.Mode()&os.ModeSticky == 0):
			return fmt.Errorf("sessions directory: %s has mode %v: others could reach the sessions' sockets; chmod go-rwx it", p, fi.Mode().Perm())
		}
		return nil
	}
	if err := check(dir, 0o077); err != nil {
		return "", err
	}
	if err := check(filepath.Dir(filepath.Clean(dir)), 0o022); err != nil {
		return "", err
	}
	return dir, nil
}

// lockSession takes the session's lock file (flock, exclusive), waiting
// as long as ctx allows. The file is kept: removing it would let two runs
// hold locks on two files of the one name.
func lockSession(ctx context.Context, f sessionFiles) (func(), error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		unlock, ok, err := lockOnce(f)
		if err != nil || ok {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for session %s's lock: %w", f.name, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// tryLock takes the session's lock if nobody holds it.
func tryLock(f sessionFiles) (func(), bool) {
	unlock, ok, err := lockOnce(f)
	return unlock, ok && err == nil
}

func lockOnce(f sessionFiles) (func(), bool, error) {
	fd, err := os.OpenFile(f.lock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("session %s's lock: %w", f.name, err)
	}
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fd.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("session %s's lock: %w", f.name, err)
	}
	// A gateway that ended removed the file, maybe after this run opened
	// it: the lock is on a file of that name only if it is still there.
	var held, now syscall.Stat_t
	if syscall.Fstat(int(fd.Fd()), &held) != nil || syscall.Stat(f.lock(), &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
		fd.Close()
		return nil, false, nil
	}
	return func() { fd.Close() }, true, nil
}

// processAlive reports whether pid runs (a zombie does not).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return false
	}
	return !isZombie(pid)
}

func terminateProcess(pid int) { _ = syscall.Kill(pid, syscall.SIGTERM) }
func killProcess(pid int)      { _ = syscall.Kill(pid, syscall.SIGKILL) }

// readyPipe is fd 3, where the starting run waits for the gateway's word;
// nil when the gateway was not started that way. It is kept from the
// processes the gateway starts.
func readyPipe() io.WriteCloser {
	var st syscall.Stat_t
	if syscall.Fstat(3, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	syscall.CloseOnExec(3)
	return os.NewFile(3, "ready")
}

// privateUmask makes every file the gateway creates (its socket first)
// the user's only.
func privateUmask() { syscall.Umask(0o077) }
