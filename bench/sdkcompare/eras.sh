#!/usr/bin/env bash
# Runs the era benchmarks of this package (eras_test.go) in one `go test`
# run and prints their medians as ratio tables in Markdown:
#
#   - EraCall: a tools/call by anymcp on a 2026-07-28 server ÷ the same call
#     on a 2025-11-25 server, per transport;
#   - ModernCall: the go-sdk client ÷ anymcp on the same 2026-07-28 server
#     (go-sdk's own stateless server, and testservers.StartModern);
#   - ColdDial: client.Dial of each era and transport, cold, with the HTTP
#     requests the server saw and the messages the client sent.
#
#   bench/sdkcompare/eras.sh                 # -count 10 (a few minutes)
#   COUNT=3 bench/sdkcompare/eras.sh
#   bench/sdkcompare/eras.sh old-raw.txt     # only summarise an earlier run
#
# The raw `go test -bench` output is kept in $OUT (default: a new temporary
# directory) as eras-raw.txt. Medians need no benchstat.
set -euo pipefail
if [ $# -ge 1 ]; then in="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; fi
cd "$(dirname "$0")/.."   # the bench module

COUNT="${COUNT:-10}"
OUT="${OUT:-$(mktemp -d -t sdkcompare-eras.XXXXXX)}"
mkdir -p "$OUT"
raw="$OUT/eras-raw.txt"

if [ $# -ge 1 ]; then
  cp "$in" "$raw"
else
  echo "running: go test -run '^\$' -bench 'EraCall|ModernCall|ColdDial' -benchmem -count $COUNT ./sdkcompare/ (raw output in $raw) ..." >&2
  go test -run '^$' -bench 'EraCall|ModernCall|ColdDial' -benchmem -count "$COUNT" -timeout 60m ./sdkcompare/ >"$raw"
fi

awk '
function human_t(s,   a) { a = s < 0 ? -s : s
  if (a >= 1)    return sprintf("%.3g s", s)
  if (a >= 1e-3) return sprintf("%.3g ms", s * 1e3)
  if (a >= 1e-6) return sprintf("%.3g µs", s * 1e6)
  return sprintf("%.3g ns", s * 1e9) }
function human_b(b,   a) { a = b < 0 ? -b : b
  if (a >= 1048576) return sprintf("%.1f MiB", b / 1048576)
  if (a >= 1024)    return sprintf("%.1f KiB", b / 1024)
  return sprintf("%d B", b) }
function ratio(x, y) { return (y > 0) ? sprintf("%.2f×", x / y) : "–" }
function signed_b(b) { return (b >= 0 ? "+" : "−") human_b(b < 0 ? -b : b) }
# med(name, unit): the median of the samples of a sub-benchmark in a unit.
function med(name, unit,   k, n, i, j, t, v) {
  k = name SUBSEP unit; n = cnt[k]
  if (n == 0) return -1
  for (i = 1; i <= n; i++) v[i] = val[k, i]
  for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
  return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
/^Benchmark/ {
  name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
  for (i = 3; i < NF; i += 2) {
    unit = $(i + 1); v = $i
    if (unit == "ns/op") { unit = "s/op"; v = v / 1e9 }
    k = name SUBSEP unit; val[k, ++cnt[k]] = v
  }
  if (!(name in seen)) { seen[name] = 1 }
  samples[name]++
}
END {
  n = 0; for (k in samples) if (samples[k] > n) n = samples[k]
  printf "Medians of %d samples per row; ratios are of medians from this one run.\n\n", n

  print "### A call on a 2026-07-28 server vs the same call on a 2025-11-25 server (anymcp)\n"
  print "| transport | legacy: time, B/op, allocs | modern: time, B/op, allocs | time modern ÷ legacy | B/op ÷ | allocs ÷ |"
  print "|---|---|---|---|---|---|"
  split("http-json http-sse stdio", trs, " ")
  for (i = 1; i <= 3; i++) {
    l = "EraCall/transport=" trs[i] "/era=legacy"; m = "EraCall/transport=" trs[i] "/era=modern"
    if (med(l, "s/op") < 0) continue
    printf "| %s | %s, %s, %g | %s, %s, %g | %s | %s | %s |\n", trs[i],
      human_t(med(l, "s/op")), human_b(med(l, "B/op")), med(l, "allocs/op"),
      human_t(med(m, "s/op")), human_b(med(m, "B/op")), med(m, "allocs/op"),
      ratio(med(m, "s/op"), med(l, "s/op")), ratio(med(m, "B/op"), med(l, "B/op")), ratio(med(m, "allocs/op"), med(l, "allocs/op"))
  }

  print "\n### anymcp vs the go-sdk client on the same 2026-07-28 server\n"
  print "| server | anymcp: time, B/op, allocs | go-sdk: time, B/op, allocs | time go-sdk ÷ anymcp | B/op ÷ | allocs ÷ | go-sdk − anymcp: B/op, allocs |"
  print "|---|---|---|---|---|---|---|"
  split("gosdk-stateless testservers-modern", svs, " ")
  for (i = 1; i <= 2; i++) {
    a = "ModernCall/server=" svs[i] "/client=anymcp"; g = "ModernCall/server=" svs[i] "/client=gosdk"
    if (med(a, "s/op") < 0) continue
    printf "| %s | %s, %s, %g | %s, %s, %g | %s | %s | %s | %s, %+g |\n", svs[i],
      human_t(med(a, "s/op")), human_b(med(a, "B/op")), med(a, "allocs/op"),
      human_t(med(g, "s/op")), human_b(med(g, "B/op")), med(g, "allocs/op"),
      ratio(med(g, "s/op"), med(a, "s/op")), ratio(med(g, "B/op"), med(a, "B/op")), ratio(med(g, "allocs/op"), med(a, "allocs/op")),
      signed_b(med(g, "B/op") - med(a, "B/op")), med(g, "allocs/op") - med(a, "allocs/op")
  }

  print "\n### Cold client.Dial per era and transport (anymcp, default era policy)\n"
  print "| server | time per Dial | ÷ modern of the same kind | HTTP requests during Dial | HTTP requests per connection (Close included) | messages sent during Dial | B/op | allocs/op |"
  print "|---|---|---|---|---|---|---|---|"
  split("modern-http legacy-http legacy-sse modern-stdio legacy-stdio", cds, " ")
  for (i = 1; i <= 5; i++) {
    d = "ColdDial/server=" cds[i]
    if (med(d, "s/op") < 0) continue
    base = (cds[i] ~ /stdio/) ? "ColdDial/server=modern-stdio" : "ColdDial/server=modern-http"
    printf "| %s | %s | %s | %g | %g | %g | %s | %g |\n", cds[i], human_t(med(d, "s/op")), ratio(med(d, "s/op"), med(base, "s/op")),
      med(d, "http-reqs/dial"), med(d, "http-reqs/conn"), med(d, "msgs/dial"), human_b(med(d, "B/op")), med(d, "allocs/op")
  }
}' "$raw"
echo
echo "raw output: $raw" >&2
