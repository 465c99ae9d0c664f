#!/usr/bin/env bash
# CI: run every fuzz target of the module for a short time each, so that a
# regression in a parser or an origin check is caught. The targets are found,
# not listed: `go test -list 'Fuzz.*'` per package.
#
#   FUZZTIME   how long each target runs (go test -fuzztime), default 5s
#   FUZZPKGS   the packages to search, default ./...
#
# A failure leaves the failing input in the package's testdata/fuzz/<Target>/,
# where plain `go test` replays it from then on: commit it with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
fuzztime="${FUZZTIME:-5s}"

# One `go test -list` for all packages: it prints each package's Fuzz*
# names, then an "ok <package>" line.
list=$(go test -list 'Fuzz.*' ${FUZZPKGS:-./...})
targets=0
names=()
while read -r first second _; do
  case "$first" in
    Fuzz*) names+=("$first") ;;
    ok)
      for target in ${names[@]+"${names[@]}"}; do
        echo "== fuzz $second $target ($fuzztime)"
        go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$second"
        targets=$((targets + 1))
      done
      names=()
      ;;
  esac
done <<< "$list"
if [ "$targets" -eq 0 ]; then
  echo "fuzz: no Fuzz targets found" >&2
  exit 1
fi
echo "== fuzz: $targets targets, $fuzztime each"
