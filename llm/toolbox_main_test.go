package llm

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // the test binary doubles as a stdio test server
	goleak.VerifyTestMain(m)
}
