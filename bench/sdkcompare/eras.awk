# eras.awk prints eras.sh's tables from the medians medians.awk reads.
#
#   awk -f medians.awk -f eras.awk raw.txt

function signed_b(b) { return (b >= 0 ? "+" : "−") human_b(b < 0 ? -b : b) }
# tba is the "time, B/op, allocs" cell of benchmark b.
function tba(b) { return human_t(med(b, "s/op")) ", " human_b(med(b, "B/op")) ", " sprintf("%g", med(b, "allocs/op")) }
# ratios3 is the "time | B/op | allocs" cells of benchmark a ÷ benchmark b.
function ratios3(a, b) {
  return ratio(med(a, "s/op"), med(b, "s/op")) " | " ratio(med(a, "B/op"), med(b, "B/op")) " | " ratio(med(a, "allocs/op"), med(b, "allocs/op"))
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
    printf "| %s | %s | %s | %s |\n", trs[i], tba(l), tba(m), ratios3(m, l)
  }

  print "\n### anymcp vs the go-sdk client on the same 2026-07-28 server\n"
  print "| server | anymcp: time, B/op, allocs | go-sdk: time, B/op, allocs | time go-sdk ÷ anymcp | B/op ÷ | allocs ÷ | go-sdk − anymcp: B/op, allocs |"
  print "|---|---|---|---|---|---|---|"
  split("gosdk-stateless testservers-modern", svs, " ")
  for (i = 1; i <= 2; i++) {
    a = "ModernCall/server=" svs[i] "/client=anymcp"; g = "ModernCall/server=" svs[i] "/client=gosdk"
    if (med(a, "s/op") < 0) continue
    printf "| %s | %s | %s | %s | %s, %+g |\n", svs[i], tba(a), tba(g), ratios3(g, a),
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
}
