package negotiate

import (
	"strings"

	"github.com/anymcp/anymcp/stdio"
)

// Stdio is the transport name of a server started as a command.
const Stdio = "stdio"

// CommandKey is the key a command's outcome is cached under: "stdio:",
// then the program and its arguments as given.
func CommandKey(cmd stdio.Command) string {
	return "stdio:" + strings.Join(append([]string{cmd.Path}, cmd.Args...), " ")
}
