#!/usr/bin/env bash
# Scale-out of `mcpcall bridge`: 3 bridge processes sharing one state key
# behind HAProxy (round-robin), in front of one stateless upstream (a
# testservers server in the driver's process). The driver
# (scripts/bridgescale) sends concurrent calls of a tool that counts its
# executions per key and input_required rounds, kills one bridge
# (SIGKILL) mid-run, and checks: every call succeeds or fails typed, none
# runs twice, rounds whose legs land on two bridges complete.
#
#   bash scripts/bridge-scaleout.sh                 # the defaults: 300 calls, 60 rounds, 8 callers
#   bash scripts/bridge-scaleout.sh -calls 1000 -workers 16   # driver flags (go run ./scripts/bridgescale -h)
#   STAND_IN=1 bash scripts/bridge-scaleout.sh      # a plain reverse proxy in place of mcpcall bridge:
#                                                    # checks the harness itself
#
# Installs the Debian package haproxy when it is missing (apt-get, as
# root). Everything binds 127.0.0.1 on ports the kernel picks. Exits 1 on
# a violation, 2 when the run cannot be set up; ends every process it
# started, and fails if one is left.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

name=bridge-scaleout
# shellcheck source=scripts/scaleout-lib.sh
source "$root/scripts/scaleout-lib.sh"

echo "-- building mcpcall and the driver"
if [ -f cmd/mcpcall/go.mod ]; then
  (cd cmd/mcpcall && go build -o "$dir/mcpcall" .)
else
  go build -o "$dir/mcpcall" ./cmd/mcpcall
fi
go build -o "$dir/bridgescale" ./scripts/bridgescale

echo "-- running (logs in $dir)"
bridge_bin="$dir/mcpcall"
if [ -n "${STAND_IN:-}" ]; then bridge_bin="$dir/bridgescale"; fi
"$dir/bridgescale" -mcpcall "$bridge_bin" -haproxy "$(command -v haproxy)" -dir "$dir" "$@" &
driver_pid=$!
wait "$driver_pid"
