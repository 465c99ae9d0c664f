# Shared by scripts/bridge-scaleout.sh and scripts/gateway-scaleout.sh
# (sourced, with $name set to the script's name for its messages):
# installs haproxy when missing, makes the run's directory $dir, and on
# exit ends the driver ($driver_pid) and every process group it recorded
# in $dir/pids, failing when one is left.
if ! command -v haproxy >/dev/null; then
  echo "-- installing haproxy (apt-get)"
  if [ "$(id -u)" -ne 0 ]; then echo "$name: haproxy is missing and installing it needs root" >&2; exit 2; fi
  export DEBIAN_FRONTEND=noninteractive
  # Do not let the package start its own haproxy (it would bind *:80 on a system with init scripts).
  policy=/usr/sbin/policy-rc.d
  made_policy=
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1; fi
  { apt-get install -y -q haproxy >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q haproxy >/dev/null; }; } \
    || { [ -n "$made_policy" ] && rm -f "$policy"; echo "$name: apt-get install haproxy failed" >&2; exit 2; }
  [ -n "$made_policy" ] && rm -f "$policy"
fi

dir="$(mktemp -d -t "$name.XXXXXX")"
driver_pid=
cleanup() {
  status=$?
  trap - EXIT INT TERM
  if [ -n "$driver_pid" ] && kill -0 "$driver_pid" 2>/dev/null; then
    kill -TERM "$driver_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$driver_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$driver_pid" 2>/dev/null || true
  fi
  # The driver records every process it starts (each the leader of its own group).
  if [ -f "$dir/pids" ]; then
    while read -r pid; do kill -KILL -- "-$pid" 2>/dev/null || true; done <"$dir/pids"
    left=
    while read -r pid; do
      if [ -n "$(pgrep -g "$pid" 2>/dev/null || true)" ]; then left="$left $pid"; fi
    done <"$dir/pids"
    if [ -n "$left" ]; then
      echo "$name: processes left in group(s)$left" >&2
      status=1
    fi
  fi
  if [ "$status" -ne 0 ]; then
    echo "$name: logs kept in $dir" >&2
  else
    rm -rf "$dir"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

