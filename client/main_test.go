package client

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // this test binary doubles as the stdio test server
	runFloodFromEnv()        // and as the flooded client (and its flooding server) of TestFlood*
	goleak.VerifyTestMain(m)
}
