package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// TestProbeEras: probe --json names the era and the revision a server of
// each era speaks, and --era / --protocol-version narrow the ladder.
func TestProbeEras(t *testing.T) {
	modern := testservers.StartStateless(testservers.HTTPOptions{})
	defer modern.Close()
	dual := testservers.StartDualEra(testservers.HTTPOptions{})
	defer dual.Close()
	legacy := testservers.StartStreamable(testservers.HTTPOptions{})
	defer legacy.Close()
	probe := func(args ...string) (probeResult, result) {
		t.Helper()
		r := newRunner(t)
		// --era stateless over stdio has no fallback: a test server that
		// starts slowly on a busy machine (past the 1 s default) must
		// not be taken for one that does not speak the era.
		r.probeTimeout = 20 * time.Second
		res := r.run(append([]string{"probe", "--json"}, args...)...)
		var p probeResult
		if res.code == 0 {
			if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, res.stdout)
			}
		}
		return p, res
	}
	for _, tc := range []struct {
		args     []string
		era      string
		version  string
		attempts int
	}{
		{[]string{modern.URL}, "stateless", "2026-07-28", 1},
		{[]string{dual.URL}, "stateless", "2026-07-28", 1},
		{[]string{"--era", "initialize", dual.URL}, "initialize", "2025-11-25", 1},
		{[]string{"--era", "stateless", dual.URL}, "stateless", "2026-07-28", 1},
		{[]string{"--protocol-version", "2025-06-18", dual.URL}, "initialize", "2025-06-18", 1},
		{[]string{legacy.URL}, "initialize", "2025-11-25", 2},
		{append([]string{"--era", "stateless"}, stdioTarget(testservers.Options{Eras: testservers.StatelessOnly})...), "stateless", "2026-07-28", 1},
		// The names the eras had before, kept as aliases.
		{[]string{"--era", "legacy", dual.URL}, "initialize", "2025-11-25", 1},
		{[]string{"--era", "modern", dual.URL}, "stateless", "2026-07-28", 1},
	} {
		p, res := probe(tc.args...)
		if res.code != 0 {
			t.Errorf("%v: exit %d %s", tc.args, res.code, res.stderr)
			continue
		}
		if string(p.Era) != tc.era || p.ProtocolVersion != tc.version || p.Negotiation == nil || len(p.Negotiation.Attempts) != tc.attempts {
			t.Errorf("%v: era %s, revision %s, negotiation %+v", tc.args, p.Era, p.ProtocolVersion, p.Negotiation)
		}
		if tc.args[0] == modern.URL && strings.Join(p.SupportedVersions, ",") != "2026-07-28" {
			t.Errorf("%v: supportedVersions %v", tc.args, p.SupportedVersions)
		}
	}
	// Only the stateless era, at an initialize-era server: a connection failure (4)
	// that says why.
	for _, era := range []string{"stateless", "modern"} {
		if _, res := probe("--era", era, legacy.URL); res.code != exitConnect || !strings.Contains(res.stderr, "only stateless revisions") {
			t.Errorf("--era %s at an initialize-era server: exit %d %s", era, res.code, res.stderr)
		}
	}
	if _, res := probe("--era", "sideways", legacy.URL); res.code != exitUsage {
		t.Errorf("--era sideways: exit %d", res.code)
	}
	if _, res := probe("--protocol-version", "1999-01-01", legacy.URL); res.code != exitUsage {
		t.Errorf("an unknown revision: exit %d", res.code)
	}
}
