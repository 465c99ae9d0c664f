package gateway

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/testservers"
)

func TestMain(m *testing.M) {
	testservers.RunFromEnv() // this test binary doubles as the stdio upstream
	goleak.VerifyTestMain(m)
}
