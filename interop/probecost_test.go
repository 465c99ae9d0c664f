package interop_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

var probeRuns = flag.Int("probe-runs", 3, "Dials per server and era policy in TestStdioProbeCost (it logs the medians; run with -v)")

// TestStdioProbeCost measures what the stateless probe (server/discover
// before initialize) costs an initialize-era stdio server: Dial with the default era
// policy against Dial with negotiate.InitializeOnly, -probe-runs times each,
// alternating, on server-everything and on anymcp's own initialize-era test
// server. It checks that each Dial negotiates the initialize era (the probe,
// then initialize; InitializeOnly: initialize alone) and logs the median Dial
// times.
func TestStdioProbeCost(t *testing.T) {
	self, selfArgs, selfEnv := testservers.StdioCommand()
	servers := []struct {
		name   string
		target func(t *testing.T) client.Target
	}{
		{"server-everything", func(t *testing.T) client.Target {
			return client.Command(nodePath(t), everythingMain(t), "stdio")
		}},
		{"testservers (initialize era, default Options)", func(*testing.T) client.Target {
			return client.Command(self, selfArgs...).WithEnv(selfEnv...)
		}},
	}
	policies := []struct {
		name string
		era  negotiate.EraPolicy
	}{{"default (probe first)", negotiate.EraAuto}, {"WithEra(InitializeOnly)", negotiate.InitializeOnly}}

	var report strings.Builder
	fmt.Fprintf(&report, "| server | runs | Dial, default policy: median (p25–p75) | Dial, InitializeOnly | difference of the medians | one round trip on the started server | probe unanswered within DefaultProbeTimeout |\n|---|---|---|---|---|---|---|\n")
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			target := s.target(t)
			dials := make([][]time.Duration, len(policies))
			var (
				rtts     []time.Duration
				timeouts int
			)
			for i := range *probeRuns {
				for k := range policies {
					k = (k + i) % len(policies) // alternate which goes first
					d, rtt, timedOut := dialOnce(t, target, policies[k].era)
					dials[k] = append(dials[k], d)
					if policies[k].era == negotiate.EraAuto {
						rtts = append(rtts, rtt)
					}
					if timedOut {
						timeouts++
					}
				}
			}
			auto, initializeOnly, rtt := median(dials[0]), median(dials[1]), median(rtts)
			sign := "+"
			if auto < initializeOnly {
				sign = "−"
			}
			fmt.Fprintf(&report, "| %s | %d | %v (%v–%v) | %v (%v–%v) | %s%v (%.3f×) | %v | %d of %d |\n", s.name, *probeRuns,
				round(auto), round(quantile(dials[0], 0.25)), round(quantile(dials[0], 0.75)),
				round(initializeOnly), round(quantile(dials[1], 0.25)), round(quantile(dials[1], 0.75)),
				sign, round(max(auto-initializeOnly, initializeOnly-auto)), float64(auto)/float64(initializeOnly), round(rtt), timeouts, *probeRuns)
		})
	}
	t.Logf("median of %d Dials each (process start and handshake; Close not timed):\n%s", *probeRuns, report.String())
}

// dialOnce dials target with era policy p, checks what it negotiated, and
// returns how long Dial took and, with the default policy, how long
// initialize took after the probe: one round trip on a server that is up,
// which is what the probe adds (the probe's own time includes the start of
// the process, which it waits for), and whether the probe went unanswered
// for DefaultProbeTimeout.
func dialOnce(t *testing.T, target client.Target, p negotiate.EraPolicy) (dial, rtt time.Duration, timedOut bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	start := time.Now()
	c, err := client.Dial(ctx, target, client.WithEra(p))
	dial = time.Since(start)
	if err != nil {
		t.Fatalf("%v: %v", p, err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	info := c.Info()
	if info.Era != mcp.EraInitialize || info.ProtocolVersion != mcp.Version20251125 {
		t.Fatalf("%v: negotiated %s %s, want initialize 2025-11-25", p, info.Era, info.ProtocolVersion)
	}
	at := info.Negotiation.Attempts
	switch p {
	case negotiate.InitializeOnly:
		if len(at) != 1 || at[0].Request != negotiate.RequestInitialize {
			t.Fatalf("InitializeOnly sent more than initialize:\n%s", info.Negotiation)
		}
	default:
		// Refused, or not answered within DefaultProbeTimeout when the
		// process starts slower than that (a loaded machine): initialize
		// follows either way.
		if len(at) != 2 || at[0].Request != negotiate.RequestDiscover || (at[0].Answer != "refused" && at[0].Answer != "no answer") ||
			at[1].Request != negotiate.RequestInitialize {
			t.Fatalf("not probe, then initialize:\n%s", info.Negotiation)
		}
		rtt = at[1].Duration
		timedOut = at[0].Answer == "no answer"
	}
	return dial, rtt, timedOut
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quantile returns the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func round(d time.Duration) time.Duration {
	if d < 0 {
		return -round(-d)
	}
	return d.Round(10 * time.Microsecond)
}
