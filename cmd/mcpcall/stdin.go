package main

import (
	"io"
	"os"
)

// stdinHasData reports whether stdin may carry arguments: a pipe or a
// regular file, never a terminal or a device such as /dev/null (reading
// those would wait for a person, or for nothing). A reader that is not a
// file (a test's) counts as data.
func (c *cli) stdinHasData() bool {
	if c.stdin == nil || c.stdinTTY {
		return false
	}
	f, ok := c.stdin.(*os.File)
	if !ok {
		return true
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	mode := st.Mode()
	return mode&os.ModeNamedPipe != 0 || mode.IsRegular()
}

// maxStdinArgs bounds arguments read from stdin.
const maxStdinArgs = 64 << 20

func readAllStdin(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, maxStdinArgs))
}
