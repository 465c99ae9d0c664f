#!/usr/bin/env bash
# Runs the gateway benchmarks of this package side by side with mcporter
# serve --http, over the same fleet, and prints their tables in Markdown:
# the tables of docs/gateway-benchmarks.md.
#
#   bench/gateway/run.sh                      # 2000 calls per side, 1 round
#   CALLS=5000x ROUNDS=3 bench/gateway/run.sh
#   bench/gateway/run.sh raw.txt              # only summarise an earlier run
#
# Needs Go, Node >= 20 and npm (mcporter is installed into
# bench/gateway/node_modules by `npm ci`, at package-lock.json's version).
# Everything binds 127.0.0.1 on ports the kernel picks. The raw output goes
# to $OUT (default: a new temporary directory) as raw.txt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
summary() {
  awk '
    /^# / { print; next }
    /^Benchmark/ {
      name = $1; sub(/-[0-9]+$/, "", name); split(name, p, "/")
      for (i = 3; i < NF; i += 2) v[p[1] "/" p[2] "/" $(i+1)] = $i
      sides[p[1] "/" p[2]] = 1
    }
    function g(k) { return (k in v) ? v[k] : "-" }
    END {
      print ""
      print "| 64 clients calling echo | µs per call | ÷ direct | p50 ms | p99 ms | B/call | allocs/call |"
      print "|---|---|---|---|---|---|---|"
      d = g("BenchmarkCall/direct/ns/op")
      split("direct gateway mcporter", s, " ")
      for (i = 1; i <= 3; i++) {
        k = "BenchmarkCall/" s[i]
        ns = g(k "/ns/op"); r = (ns != "-" && d != "-") ? sprintf("%.1f×", ns / d) : "-"
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", s[i], (ns == "-" ? "-" : sprintf("%.0f", ns / 1000)), r, g(k "/p50-ms"), g(k "/p99-ms"), g(k "/B/op"), g(k "/allocs/op")
      }
      print ""
      print "| 100 idle 2025 sessions | KiB heap per session | KiB RSS per session (its processes) |"
      print "|---|---|---|"
      printf "| gateway | %s | %s (its own stdio upstream) |\n", g("BenchmarkSessions/gateway/KiB-heap/session"), g("BenchmarkSessions/gateway/KiB-rss-upstream/session")
      printf "| mcporter | - | %s (node serve + daemon; one shared upstream) |\n", g("BenchmarkSessions/mcporter/KiB-rss/session")
      print ""
      print "| 1,000 HTTP servers, listed from cold | seconds | tools listed | KiB per server |"
      print "|---|---|---|---|"
      printf "| gateway | %s | %s | %s (heap) |\n", g("BenchmarkFleet1000/gateway/s-list"), g("BenchmarkFleet1000/gateway/tools"), g("BenchmarkFleet1000/gateway/KiB-heap/server")
      printf "| mcporter | %s | %s | %s (RSS) |\n", g("BenchmarkFleet1000/mcporter/s-list"), g("BenchmarkFleet1000/mcporter/tools"), g("BenchmarkFleet1000/mcporter/KiB-rss/server")
    }' "$1"
}
if [ $# -ge 1 ]; then summary "$1"; exit; fi
cd "$here"

CALLS="${CALLS:-2000x}"
ROUNDS="${ROUNDS:-1}"
OUT="${OUT:-$(mktemp -d -t gatewaybench.XXXXXX)}"
mkdir -p "$OUT"
raw="$OUT/raw.txt"

for tool in go node npm; do
  command -v "$tool" >/dev/null || { echo "gateway bench: $tool is needed (Go, Node >= 20, npm)" >&2; exit 1; }
done
want=$(node -p "require('./package-lock.json').packages['node_modules/mcporter'].version")
have=$(node -p "try { require('./node_modules/mcporter/package.json').version } catch { '' }")
if [ "$want" != "$have" ]; then
  echo "-- npm ci (mcporter $want)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi

echo "-- building the benchmark binary" >&2
GOWORK=off go test -c -o "$OUT/gateway.test" .
{
  echo "# date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "# go: $(go env GOVERSION); node: $(node --version); mcporter: $have$( [ -n "$have" ] || echo "$want")"
  echo "# cpus: $(nproc); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$raw"

# The binary runs from this directory: it finds node_modules relative to it.
run() { "$OUT/gateway.test" -test.run '^$' -test.benchmem "$@" 2>&1 | tee -a "$raw" >&2; }
for r in $(seq "$ROUNDS"); do
  echo "-- round $r of $ROUNDS: calls" >&2
  run -test.bench '^BenchmarkCall' -test.benchtime "$CALLS"
done
echo "-- idle sessions" >&2
run -test.bench '^BenchmarkSessions' -test.benchtime 1x
echo "-- 1,000 servers" >&2
run -test.bench '^BenchmarkFleet1000' -test.benchtime 1x -test.timeout 20m
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
status=0
if grep -q '^--- FAIL\|^FAIL' "$raw"; then echo "gateway bench: some benchmarks failed (see $raw)" >&2; status=1; fi
summary "$raw" | tee "$OUT/tables.md"
echo "raw output: $raw" >&2
exit "$status"
