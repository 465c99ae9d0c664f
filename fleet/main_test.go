package fleet

import (
	"testing"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // this test binary doubles as the stdio test server
	testkit.VerifyMain(m)    // no goroutine and no child process left
}
