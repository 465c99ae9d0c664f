#!/usr/bin/env bash
# Runs the client scenarios of the official MCP conformance suite
# (@modelcontextprotocol/conformance, version pinned in package-lock.json)
# against anymcp's client: conformance/client, built from this tree.
#
#   bash conformance/run.sh              # sse-retry, then every other client scenario
#   bash conformance/run.sh sse-retry    # only the scenarios named
#
# Needs Go, Node >= 20.6 and npm (the npm registry on first use: the suite is
# installed into conformance/node_modules by `npm ci`). On Node 20 the suite's
# missing fs.globSync is supplied by conformance/globsync.mjs.
#
# The suite runs "<command> <server-url>" per scenario with
# MCP_CONFORMANCE_SCENARIO set. Scenarios run one at a time, so that no other
# scenario's load skews the timing sse-retry measures.
#
# Exit status is non-zero when sse-retry fails, warns, or the client errs in it
# (issue 4 wants it clean: reconnect within 450-700 ms of a 500 ms retry:), or
# when another scenario disagrees with conformance/expected-failures.yml (fails
# without being listed, or passes while listed). A scenario passes when every
# check passes and the client exits 0 (or the scenario allows it an error). Results, with each client's
# stdout and stderr, stay in conformance/results/.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=conformance
suite_js=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
baseline=$dir/expected-failures.yml
results=$dir/results
client=./$dir/bin/anymcp-conformance-client
started=$(date +%s%N)

for tool in go node npm; do
  command -v "$tool" >/dev/null || { echo "conformance: $tool is needed (Go, Node >= 20.6, npm)" >&2; exit 1; }
done
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 6) ? 0 : 1)' ||
  { echo "conformance: Node >= 20.6 is needed (node --import and module.register), found $(node --version)" >&2; exit 1; }

if [ ! -f "$suite_js" ]; then
  echo "-- installing the conformance suite (npm ci)"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
fi
echo "-- building $client"
go build -o "$client" ./$dir/client

suite() { node --import "./$dir/globsync.mjs" "$suite_js" "$@"; }

if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  scenarios=(sse-retry)
  while read -r name; do
    [ "$name" = sse-retry ] || scenarios+=("$name")
  done < <(suite list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi

rm -rf "$results"
mkdir -p "$results"
echo "-- $(suite --version 2>/dev/null | sed 's/^/@modelcontextprotocol\/conformance /'), node $(node --version), ${#scenarios[@]} client scenario(s), one at a time"

status=0
problems=()
for name in "${scenarios[@]}"; do
  out=$results/${name//\//_}
  mkdir -p "$out"
  args=(client --command "$client" --scenario "$name" --timeout 30000 -o "$out")
  judge=("$baseline")
  [ "$name" = sse-retry ] && judge=() # strict: no baseline, so any failure or warning counts
  rc=0
  suite "${args[@]}" >"$out/suite.log" 2>&1 || rc=$?
  verdict=0
  node "$dir/checks.mjs" "$name" "$out" "${judge[@]}" || verdict=$?
  # checks.mjs judges against the baseline (the suite's own --expected-failures
  # counts only checks, so a client that exits with an error after passing
  # checks would be "stale"); the suite's exit status counts for sse-retry.
  if [ "$verdict" -ne 0 ] || { [ "$name" = sse-retry ] && [ "$rc" -ne 0 ]; }; then
    status=1
    case $verdict in
      1) why="failed or warned, and is not in $baseline" ;;
      3) why="passes but is listed in $baseline: remove it" ;;
      *) why="the suite exited $rc: $(grep -m1 -E 'CLIENT|Client test error|Validation error' "$out/suite.log" | sed 's/\x1b\[[0-9;]*m//g')" ;;
    esac
    [ "$name" = sse-retry ] && why="did not pass cleanly (suite exit $rc)"
    problems+=("$name: $why (see $out/)")
  fi
done

elapsed=$((($(date +%s%N) - started) / 1000000))
echo "-- ${#scenarios[@]} scenario(s) in $((elapsed / 1000)).$(printf %03d $((elapsed % 1000))) s; results in $results/"
if [ "$status" -ne 0 ]; then
  printf 'conformance: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "-- conformance: sse-retry clean; every other scenario as the baseline expects"
