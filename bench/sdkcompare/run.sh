#!/usr/bin/env bash
# Runs the client comparison benchmarks of this package, summarises them
# with benchstat, and prints ratio tables in Markdown: each client ÷ anymcp,
# and each client's own overhead above the floor (client − floor).
#
#   bench/sdkcompare/run.sh                 # everything, -count 5 (a few minutes)
#   COUNT=3 BENCH='CallTool' bench/sdkcompare/run.sh
#   bench/sdkcompare/run.sh old-raw.txt     # only summarise an earlier run
#
# The raw `go test -bench` output is kept in $OUT (default: a new temporary
# directory), as raw.txt, next to benchstat.txt (the comparison with
# p-values), benchstat.csv (medians per row) and ratios.md.
set -euo pipefail
cd "$(dirname "$0")/.."   # the bench module

COUNT="${COUNT:-5}"
BENCH="${BENCH:-.}"
OUT="${OUT:-$(mktemp -d -t sdkcompare.XXXXXX)}"
mkdir -p "$OUT"

# benchstat: on PATH, in GOPATH/bin, or installed there now.
BENCHSTAT="$(command -v benchstat || true)"
if [ -z "$BENCHSTAT" ]; then
  BENCHSTAT="$(go env GOPATH)/bin/benchstat"
  if [ ! -x "$BENCHSTAT" ]; then
    echo "installing benchstat..." >&2
    go install golang.org/x/perf/cmd/benchstat@latest
  fi
fi

if [ $# -ge 1 ]; then
  cp "$1" "$OUT/raw.txt"
else
  echo "running benchmarks (-count $COUNT), raw output in $OUT/raw.txt ..." >&2
  # -v so that skips (a client refusing a result) are printed with their reason.
  go test -run '^$' -bench "$BENCH" -benchmem -count "$COUNT" -timeout 60m -v ./sdkcompare/ \
    | grep -v -e '^=== ' -e '^Benchmark[^ 	]*$' >"$OUT/raw.txt"
fi

# With 5 samples a 95% interval cannot be given; 90% can.
# benchstat.txt: one column per client, anymcp first, so that every other
# column reads "vs anymcp" with a p-value ("~" = no significant difference).
# That needs key=value sub-benchmark names: Bench/transport=T/client=C.
sed -E 's#^Benchmark([A-Za-z]+)/([a-z-]+)/([a-z-]+)-([0-9]+)#Benchmark\1/transport=\2/client=\3-\4#' \
  "$OUT/raw.txt" >"$OUT/raw-kv.txt"
"$BENCHSTAT" -confidence 0.9 -col '/client@(anymcp floor gosdk mcpgo gosdk-nocap)' -row '.name /transport' \
  "$OUT/raw-kv.txt" >"$OUT/benchstat.txt"
"$BENCHSTAT" -confidence 0.9 -format csv "$OUT/raw.txt" 2>/dev/null >"$OUT/benchstat.csv"

# Pivot benchstat's medians: rows are benchmark/transport/client.
awk -F, '
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
function signed(s) { return (substr(s, 1, 1) == "-") ? s : "+" s }
FNR == NR { # raw.txt: "... REFUSED: BenchmarkBigResult/stdio/gosdk: a 16 MiB tool result: why"
  if ((i = index($0, "REFUSED: Benchmark")) > 0) {
    r = substr($0, i + 18); name = substr(r, 1, index(r, ":") - 1); sub(/-[0-9]+$/, "", name)
    n = split(name, p, "/"); if (n == 3) refused[p[1] SUBSEP p[2]] = refused[p[1] SUBSEP p[2]] " " p[3]
  }
  next
}
$1 == "" && $2 != "" && $3 == "CI" { unit = $2; next }
$1 == "" || $1 == "geomean" || NF < 2 || $2 == "" { next }
unit == "sec/op" || unit == "B/op" || unit == "allocs/op" {
  name = $1; sub(/-[0-9]+$/, "", name)
  n = split(name, p, "/"); if (n != 3) next
  key = p[1] SUBSEP p[2]
  if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
  if (!((key, p[3]) in has)) { has[key, p[3]] = 1; clients[key] = clients[key] " " p[3] }
  v[unit, key, p[3]] = $2
}
END {
  print "| benchmark | transport | client | time | B/op | allocs/op | time ÷ anymcp | B/op ÷ anymcp | allocs ÷ anymcp | time ÷ floor | time − floor | B − floor | allocs − floor |"
  print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= nk; i++) {
    key = order[i]; split(key, kp, SUBSEP)
    nc = split(clients[key], cl, " ")
    for (j = 1; j <= nc; j++) {
      c = cl[j]
      t = v["sec/op", key, c]; b = v["B/op", key, c]; a = v["allocs/op", key, c]
      at = v["sec/op", key, "anymcp"]; ab = v["B/op", key, "anymcp"]; aa = v["allocs/op", key, "anymcp"]
      ft = v["sec/op", key, "floor"]; fb = v["B/op", key, "floor"]; fa = v["allocs/op", key, "floor"]
      if (c == "floor") { dt = "–"; db = "–"; da = "–"; rf = "1.00×" }
      else { dt = signed(human_t(t - ft)); db = signed(human_b(b - fb)); da = signed(sprintf("%g", a - fa)); rf = ratio(t, ft) }
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", kp[1], kp[2], c == "anymcp" ? "**anymcp**" : c, human_t(t), human_b(b), sprintf("%g", a), ratio(t, at), ratio(b, ab), ratio(a, aa), rf, dt, db, da
    }
    nr = split(refused[key], rc, " ")
    for (j = 1; j <= nr; j++) if (!((key, rc[j]) in has) && !((key, rc[j]) in shown)) {
      shown[key, rc[j]] = 1
      printf "| %s | %s | %s | **refused** (see below) | | | | | | | | | |\n", kp[1], kp[2], rc[j]
    }
  }
}' "$OUT/raw.txt" "$OUT/benchstat.csv" >"$OUT/ratios.md"

echo "## benchstat: medians, 90% intervals, each client vs anymcp"
echo
cat "$OUT/benchstat.txt"
echo
echo "## Ratios (medians; ÷ anymcp, and above the floor)"
echo
cat "$OUT/ratios.md"
echo
echo "## Refusals and skips"
echo
if grep -q 'REFUSED' "$OUT/raw.txt"; then
  grep -h 'REFUSED' "$OUT/raw.txt" | sed 's/^.*REFUSED: /    REFUSED: /' | sort -u
else
  echo "    none"
fi
echo
echo "raw output, benchstat and ratio tables: $OUT" >&2
