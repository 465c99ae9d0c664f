#!/usr/bin/env bash
# Runs the server scenarios of the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned in package-lock.json) against
# mcpcall bridge's faces, each in front of go-sdk v1.8's
# conformance/everything-server (built from the module cache through
# interop/go.mod):
#
#   initialize-upstream@2026-07-28  the stateless face, upstream over HTTP
#                                   in its initialize era (-stateless=false):
#                                   --requirements 2026-07-28 (scored scenarios)
#   stdio-upstream@2026-07-28       the same, upstream a stdio process
#   stateless-upstream@2025-11-25   the session face, upstream over HTTP in
#                                   revision 2026-07-28 (stateless): --spec-version 2025-11-25;
#                                   the upstream is conformance/mrtr-upstream: go-sdk's
#                                   stateless server, with the tools that ask for sampling
#                                   and elicitation served by testservers through
#                                   input_required (go-sdk's stateless server cannot ask)
#   stdio-upstream@2025-11-25       the session face, upstream a stdio
#                                   process spoken to in its initialize era
#   gateway-initialize-upstream@2026-07-28, gateway-stdio-upstream@2025-11-25
#                                   the same two runs through the gateway
#                                   (mcpcall bridge --all) over a fleet of
#                                   that one server, in a view of own names
#                                   ("ownNames": the suite calls tools and
#                                   prompts by the server's names)
#
#   bash conformance/server.sh                       # every run
#   bash conformance/server.sh stdio-upstream@2025-11-25
#
# A run fails when a scenario disagrees with conformance/expected-server-failures.yml
# (fails without being listed, or passes while listed). Results stay in
# conformance/results-server/RUN/.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=conformance
suite_js=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
req_yaml=$dir/node_modules/@modelcontextprotocol/conformance/requirements/2026-07-28.yaml
baseline=$dir/expected-server-failures.yml
results=$dir/results-server
bin=$(pwd)/$dir/bin
started=$(date +%s%N)

for tool in go node npm; do
  command -v "$tool" >/dev/null || { echo "conformance: $tool is needed (Go, Node >= 20.6, npm)" >&2; exit 1; }
done
if [ ! -f "$suite_js" ]; then
  echo "-- installing the conformance suite (npm ci)"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
fi
mkdir -p "$bin"
echo "-- building mcpcall, conformance/mrtr-upstream and go-sdk's conformance/everything-server"
(cd cmd/mcpcall && go build -o "$bin/mcpcall" .)
go build -o "$bin/mrtr-upstream" ./$dir/mrtr-upstream
(cd interop && go build -o "$bin/everything-server" github.com/modelcontextprotocol/go-sdk/conformance/everything-server)

suite() { node --import "./$dir/globsync.mjs" "$suite_js" "$@"; }
freeport() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# start_upstream ARGS...: starts the everything-server over HTTP; sets $up_url.
start_upstream() {
  local port
  port=$(freeport)
  "$bin/everything-server" -http "127.0.0.1:$port" "$@" >"$results/everything-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    if node -e 'require("net").connect(+process.argv[1],"127.0.0.1").on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' "$port"; then
      up_url="http://127.0.0.1:$port/"
      return
    fi
    sleep 0.1
  done
  echo "conformance: the everything-server did not listen on $port" >&2
  exit 1
}

# start_mrtr_upstream LOG: starts conformance/mrtr-upstream in front of the
# everything-server at $up_url; sets $up_url to its own URL.
start_mrtr_upstream() {
  local log=$1
  "$bin/mrtr-upstream" -everything "$up_url" </dev/null >/dev/null 2>"$log" &
  pids+=($!)
  for _ in $(seq 1 200); do
    local u
    u=$(sed -n 's/^listening on //p' "$log" | head -1)
    if [ -n "$u" ]; then up_url=$u; return; fi
    sleep 0.05
  done
  echo "conformance: mrtr-upstream did not start:" >&2
  cat "$log" >&2
  exit 1
}

# start_bridge LOG ARGS...: starts mcpcall bridge --listen 127.0.0.1:0 ARGS;
# sets $url to its /mcp URL, read from the line it prints on stderr.
start_bridge() {
  local log=$1
  shift
  "$bin/mcpcall" bridge --listen 127.0.0.1:0 "$@" </dev/null >/dev/null 2>"$log" &
  pids+=($!)
  for _ in $(seq 1 200); do
    url=$(sed -n 's/^listening on //p' "$log" | head -1)
    [ -n "$url" ] && return
    sleep 0.05
  done
  echo "conformance: mcpcall bridge did not start:" >&2
  cat "$log" >&2
  exit 1
}

# start_gateway OUT ENTRY ARGS...: starts mcpcall bridge --all over a fleet
# of one server (ENTRY, its JSON config entry) in a view of own names, pins
# off; sets $url.
start_gateway() {
  local out=$1 entry=$2
  shift 2
  printf '{"mcpServers":{"everything":%s}}\n' "$entry" >"$out/fleet.json"
  printf '{"views":[{"name":"","ownNames":true}],"pins":{"file":false}}\n' >"$out/gateway.json"
  start_bridge "$out/bridge.log" --all --config "$out/fleet.json" --gateway "$out/gateway.json" "$@"
}

all_runs=(initialize-upstream@2026-07-28 stdio-upstream@2026-07-28 stateless-upstream@2025-11-25 stdio-upstream@2025-11-25
  gateway-initialize-upstream@2026-07-28 gateway-stdio-upstream@2025-11-25)
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=("${all_runs[@]}")

rm -rf "$results"
mkdir -p "$results"
echo "-- $(suite --version 2>/dev/null | sed 's/^/@modelcontextprotocol\/conformance /'), node $(node --version), ${#runs[@]} server run(s)"

status=0
for run in "${runs[@]}"; do
  name=${run%@*}
  rev=${run#*@}
  out=$results/$run
  mkdir -p "$out"
  case $name in
    initialize-upstream)
      start_upstream -stateless=false
      start_bridge "$out/bridge.log" "$up_url"
      ;;
    stateless-upstream)
      start_upstream -stateless=true
      start_mrtr_upstream "$out/mrtr-upstream.log"
      start_bridge "$out/bridge.log" "$up_url"
      ;;
    stdio-upstream)
      era=auto
      [ "$rev" = 2025-11-25 ] && era=initialize
      start_bridge "$out/bridge.log" --era "$era" -- "$bin/everything-server"
      ;;
    gateway-initialize-upstream)
      start_upstream -stateless=false
      start_gateway "$out" "{\"type\":\"http\",\"url\":\"$up_url\"}"
      ;;
    gateway-stdio-upstream)
      era=auto
      [ "$rev" = 2025-11-25 ] && era=initialize
      start_gateway "$out" "{\"command\":\"$bin/everything-server\"}" --era "$era"
      ;;
    *) echo "conformance: unknown run $run" >&2; exit 2 ;;
  esac
  args=(server --url "$url" -o "$out" --timeout 30000)
  if [ "$rev" = 2026-07-28 ]; then args+=(--requirements 2026-07-28); else args+=(--spec-version "$rev"); fi
  rc=0
  suite "${args[@]}" >"$out/suite.log" 2>&1 || rc=$?
  verdict=0
  node "$dir/server-checks.mjs" "$run" "$out/suite.log" "$baseline" "$req_yaml" | tee "$out/verdict.txt" || verdict=${PIPESTATUS[0]}
  [ "$verdict" -eq 0 ] || status=1
done

elapsed=$((($(date +%s%N) - started) / 1000000))
echo "-- ${#runs[@]} server run(s) in $((elapsed / 1000)).$(printf %03d $((elapsed % 1000))) s; results in $results/"
if [ "$status" -ne 0 ]; then
  echo "conformance: a server run disagrees with $baseline (see $results/)" >&2
  exit 1
fi
echo "-- conformance: every server run as the baseline expects"
