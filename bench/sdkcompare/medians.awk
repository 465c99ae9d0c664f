# medians.awk reads `go test -bench` output into medians: the part that
# summary.awk (run.sh's tables) and eras.awk (eras.sh's) share, loaded
# before either with -f.
#
#   awk -f medians.awk -f summary.awk raw.txt
#
# Every "Benchmark..." line adds one sample per unit of its sub-benchmark
# (ns/op is kept in s/op); order lists the sub-benchmarks as first seen,
# samples[name] counts their lines.

/^Benchmark[^ \t]+[ \t]+[0-9]+[ \t]/ {
  name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
  for (i = 3; i < NF; i += 2) {
    unit = $(i + 1); v = $i
    if (unit == "ns/op") { unit = "s/op"; v = v / 1e9 }
    k = name SUBSEP unit; val[k, ++cnt[k]] = v
  }
  if (!(name in samples)) order[++nn] = name
  samples[name]++
}

# med(name, unit): the median of the samples of a sub-benchmark in a unit,
# or -1 when there are none.
function med(name, unit,   k, n, i, j, t, v) {
  k = name SUBSEP unit; n = cnt[k]
  if (n == 0) return -1
  for (i = 1; i <= n; i++) v[i] = val[k, i]
  for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
  return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}

# ratio(x, y): x ÷ y as "1.23×", or "–" when either is missing.
function ratio(x, y) { return (x >= 0 && y > 0) ? sprintf("%.2f×", x / y) : "–" }

# human_t, human_b: seconds and bytes in the unit that reads best.
function human_t(s,   a) { a = s < 0 ? -s : s
  if (a >= 1)    return sprintf("%.3g s", s)
  if (a >= 1e-3) return sprintf("%.3g ms", s * 1e3)
  if (a >= 1e-6) return sprintf("%.3g µs", s * 1e6)
  return sprintf("%.3g ns", s * 1e9) }
function human_b(b,   a) { a = b < 0 ? -b : b
  if (a >= 1048576) return sprintf("%.1f MiB", b / 1048576)
  if (a >= 1024)    return sprintf("%.1f KiB", b / 1024)
  return sprintf("%d B", b) }
