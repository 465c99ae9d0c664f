#!/usr/bin/env bash
# Scale-out of the gateway (package gateway): 3 replicas sharing one state
# key behind HAProxy (round-robin; a 2025 session sticks to its replica by
# Mcp-Session-Id), over a fleet of two upstreams (a stateless 2026-07-28
# server and a 2025-11-25 session server, testservers in the driver's
# process). The driver (scripts/gatewayscale) runs each replica as itself
# (gatewayscale replica ...), sends concurrent stateless calls of a tool
# that counts its executions per key while 2025 sessions call both
# upstreams, kills one replica (SIGKILL) mid-run, and checks: stateless
# calls spread over every replica, sessions stick to theirs, every call
# succeeds or fails typed, none runs twice, none reported "not run" ran.
#
#   bash scripts/gateway-scaleout.sh                  # 300 calls, 8 callers, 6 sessions
#   bash scripts/gateway-scaleout.sh -calls 1000      # driver flags (go run ./scripts/gatewayscale -h)
#
# Installs the Debian package haproxy when it is missing (apt-get, as
# root). Everything binds 127.0.0.1 on ports the kernel picks. Exits 1 on
# a violation, 2 when the run cannot be set up; ends every process it
# started, and fails if one is left.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

name=gateway-scaleout
# shellcheck source=scripts/scaleout-lib.sh
source "$root/scripts/scaleout-lib.sh"

echo "-- building the driver"
go build -o "$dir/gatewayscale" ./scripts/gatewayscale

echo "-- running (logs in $dir)"
"$dir/gatewayscale" -haproxy "$(command -v haproxy)" -dir "$dir" "$@" &
driver_pid=$!
wait "$driver_pid"
