#!/usr/bin/env bash
# Runs anymcp's client against the servers of other implementations (go-sdk,
# mcp-go, @modelcontextprotocol/server-everything), every step asserted, and
# writes the results: interop/RESULTS.md and the table between the
# <!-- interop:begin --> and <!-- interop:end --> markers of docs/interop.md.
#
#   bash interop/run.sh                      # install what is missing, run, write the tables
#   bash interop/run.sh -run 'TestInterop/mcp-go'   # extra arguments go to `go test`
#   (cd interop && go test -run TestStdioProbeCost -v . -args -probe-runs 51)   # the probe's cost, measured
#
# Needs Go, Node >= 20 and npm (the npm registry on first use:
# server-everything is installed into interop/node_modules by `npm ci` at the
# version package-lock.json pins). The Go servers come with the module.
# Exits non-zero when any step fails; the tables are written either way.
set -euo pipefail
cd "$(dirname "$0")"
export GOWORK=off # interop's go.mod alone: the repository's go.work leaves interop out

for tool in go node npm; do
  command -v "$tool" >/dev/null || { echo "interop: $tool is needed (Go, Node >= 20, npm)" >&2; exit 1; }
done

# server-memory is the stateful server of TestSessionServerMemory (mcpcall session).
for name in server-everything server-memory; do
  pkg=node_modules/@modelcontextprotocol/$name/package.json
  want=$(node -p "require('./package-lock.json').packages['node_modules/@modelcontextprotocol/$name'].version")
  have=$(node -p "try { require('./$pkg').version } catch { '' }")
  if [ "$have" != "$want" ]; then
    echo "-- installing @modelcontextprotocol/$name $want (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
    break
  fi
done

echo "-- go test -race (TestInterop writes RESULTS.md and the table of docs/interop.md; TestStdioProbeCost, 3 Dials each)"
go test -race -count=1 "$@" . -args -results
