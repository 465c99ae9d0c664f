# summary.awk prints the tables of RESULTS.md from the raw output of
# run.sh (`go test -bench` lines of one or more interleaved rounds, and the
# "# key: value" lines run.sh writes about the run). Every figure is the
# median of the samples of one sub-benchmark; every ratio is of two medians
# from the same run.
#
#   awk -f medians.awk -f summary.awk raw.txt

function human_r(r) { return r >= 10000 ? sprintf("%.3gk", r / 1000) : sprintf("%.0f", r) }
function signed(s) { return (substr(s, 1, 1) == "-") ? s : "+" s }

function has(name) { return (name SUBSEP "s/op") in cnt }

# spread(x, y, unit): the range of the ratios x ÷ y of the samples of one
# round (the i-th sample of each; a round runs every benchmark once), as
# " (lo–hi)", or "" when the rounds do not pair up.
function spread(x, y, unit,   kx, ky, n, i, r, lo, hi) {
  kx = x SUBSEP unit; ky = y SUBSEP unit; n = cnt[kx]
  if (n < 2 || cnt[ky] != n) return ""
  for (i = 1; i <= n; i++) {
    if (val[ky, i] <= 0) return ""
    r = val[kx, i] / val[ky, i]
    if (i == 1 || r < lo) lo = r
    if (i == 1 || r > hi) hi = r
  }
  return sprintf(" (%.2f–%.2f)", lo, hi)
}

# fmtv(v, unit): a median in its unit, for a table cell.
function fmtv(v, unit) {
  if (v < 0) return "–"
  if (unit == "s/op") return human_t(v)
  if (unit == "calls/s") return human_r(v) " calls/s"
  if (unit == "B/op" || unit ~ /^(peak|heap|live|stack)-B/) return human_b(v)
  return sprintf("%g", v)
}

# cell(b, c, unit): the figure of client c in bench b ("Bench/transport"),
# go-sdk's lifted-cap variant marked † where go-sdk refused; sets cellv.
# The pseudo-client "payload" is the 16 MiB of the big result.
function cell(b, c, unit,   n) {
  if (c == "payload") { cellv = 16 * 1048576; return "16 MiB payload" }
  n = b "/" c
  if (!has(n) && c == "gosdk" && has(b "/gosdk-nocap")) { cellv = med(b "/gosdk-nocap", unit); return fmtv(cellv, unit) " †" }
  if (!has(n) && ((b SUBSEP c) in refused)) { cellv = -1; return "refused" }
  cellv = med(n, unit); return fmtv(cellv, unit)
}

# row(label, b, unit, base): a line of the scenario table; base is the
# client the first three ratios divide by.
function row(label, b, unit, base) { rowof(label, b, unit, base, "anymcp") }

# rowof is row with the client ac in anymcp's column (a variant of it).
function rowof(label, b, unit, base, ac,   f, a, g, m) {
  if (!has(b "/" ac)) return
  fs = cell(b, base, unit); f = cellv
  as = cell(b, ac, unit); a = cellv
  gs = cell(b, "gosdk", unit); g = cellv
  ms = cell(b, "mcpgo", unit); m = cellv
  printf "| %s | %s | **%s** | %s | %s | **%s**%s | %s | %s | %s | %s |\n", label, fs, as, gs, ms,
    ratio(a, f), base == "payload" ? "" : spread(b "/" ac, b "/" base, unit), ratio(g, f), ratio(m, f), ratio(g, a), ratio(m, a)
}

FNR == 1 { nfiles++ }
/^# [a-z][a-z0-9 ]*: / { # run.sh's notes on the run
  k = substr($0, 3, index($0, ": ") - 3); v = substr($0, index($0, ": ") + 2)
  if (k ~ /^round [0-9]+ load$/) { split(v, la, /[ ,]+/); l = la[1] + 0; if (nl == 0 || l < lmin) lmin = l; if (nl == 0 || l > lmax) lmax = l; nl++ }
  else note[k] = v
  next
}
(i = index($0, "REFUSED: Benchmark")) > 0 { # "... REFUSED: BenchmarkBigResult/stdio/gosdk: why"
  r = substr($0, i + 18); name = substr(r, 1, index(r, ":") - 1); sub(/-[0-9]+$/, "", name)
  n = split(name, p, "/"); if (n == 3) { refused[p[1] "/" p[2] SUBSEP p[3]] = 1; why[p[1] "/" p[2] "/" p[3]] = substr(r, index(r, ":") + 2) }
  next
}
END {
  payload = 16 * 1048576
  print "## The run\n"
  print "| | |"
  print "|---|---|"
  split("date commit go modules machine rounds wall", keys, " ")
  for (i = 1; i <= 7; i++) if (keys[i] in note) printf "| %s | %s |\n", keys[i], note[keys[i]]
  if (nl > 0) printf "| load average (1 min) at the start of each round | %.2f – %.2f |\n", lmin, lmax
  ns = 0; for (k in cnt) if (cnt[k] > ns) ns = cnt[k]
  printf "\nMedians of up to %d samples per row (one per round); every ratio is of two medians from this run.\n", ns

  print "\n## Every scenario: each client ÷ the floor, each peer ÷ anymcp\n"
  print "Lower is better, except calls/s. † go-sdk refuses a 16 MiB line over stdio; the figure is its"
  print "lifted-cap variant (gosdk-nocap). The peak heap rows divide by the payload (16 MiB), not the floor."
  print "In brackets: the lowest and highest anymcp ÷ floor of a single round (both measured in that round)."
  print ""
  print "| scenario | floor | anymcp | go-sdk | mcp-go | anymcp ÷ floor | go-sdk ÷ floor | mcp-go ÷ floor | go-sdk ÷ anymcp | mcp-go ÷ anymcp |"
  print "|---|---|---|---|---|---|---|---|---|---|"
  row("call, Streamable HTTP, JSON answer", "CallTool/http-json", "s/op", "floor")
  row("call, Streamable HTTP, SSE answer", "CallTool/http-sse", "s/op", "floor")
  row("call, stdio", "CallTool/stdio", "s/op", "floor")
  row("call, HTTP+SSE (2024-11-05)", "CallTool/legacy-sse", "s/op", "floor")
  row("16 MiB result, HTTP JSON", "BigResult/http-json", "s/op", "floor")
  row("16 MiB result, HTTP SSE", "BigResult/http-sse", "s/op", "floor")
  row("16 MiB result, stdio", "BigResult/stdio", "s/op", "floor")
  row("16 MiB result, HTTP JSON: peak heap (÷ the payload)", "BigResult/http-json", "peak-B", "payload")
  row("16 MiB result, HTTP SSE: peak heap (÷ the payload)", "BigResult/http-sse", "peak-B", "payload")
  row("16 MiB result, stdio: peak heap (÷ the payload)", "BigResult/stdio", "peak-B", "payload")
  row("connect, HTTP JSON", "Connect/http-json", "s/op", "floor")
  row("connect, HTTP SSE", "Connect/http-sse", "s/op", "floor")
  row("connect, stdio", "Connect/stdio", "s/op", "floor")
  rowof("connect, HTTP JSON, anymcp with a warm negotiation cache", "Connect/http-json", "s/op", "floor", "anymcp-warm")
  rowof("connect, HTTP SSE, anymcp with a warm negotiation cache", "Connect/http-sse", "s/op", "floor", "anymcp-warm")
  rowof("connect, stdio, anymcp with a warm negotiation cache", "Connect/stdio", "s/op", "floor", "anymcp-warm")
  row("64 callers on one Conn, HTTP JSON: calls/s (higher is better)", "ConcurrentCalls/http-json", "calls/s", "floor")
  row("64 callers, calls/s ÷ the pooled floor (64 idle conns/host)", "ConcurrentCalls/http-json", "calls/s", "floor-pooled")
  row("idle connection, live heap: Streamable HTTP (2025-11-25)", "IdleHeap/http-json", "live-B/conn", "floor")
  row("idle connection, live heap: Streamable HTTP (2025-11-25), GET stream open", "IdleHeap/http-listen", "live-B/conn", "floor")
  row("idle connection, live heap: HTTP+SSE (2024-11-05)", "IdleHeap/legacy-sse", "live-B/conn", "floor")
  row("idle connection, live heap: Streamable HTTP (2026-07-28)", "IdleHeap/modern", "live-B/conn", "floor")

  if (has("BigResult/stdio/anymcp")) {
    print "\n## The 16 MiB result: time, bytes and peak heap (the client's alone: every server in a process of its own)\n"
    print "peak = how far the heap (live objects and garbage not yet collected, sampled every millisecond) rose"
    print "above its level before the call, default GOGC. The floor reuses one buffer that holds the largest"
    print "answer for good, so its peak above that level is 0."
    print ""
    print "| transport | client | time | time ÷ floor | time ÷ anymcp | B/op | allocs/op | peak | peak ÷ payload | peak ÷ anymcp's |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    split("http-json http-sse stdio", trs, " ")
    split("floor anymcp gosdk gosdk-nocap mcpgo", cls, " ")
    for (i = 1; i <= 3; i++) for (j = 1; j <= 5; j++) {
      b = "BigResult/" trs[i]; n = b "/" cls[j]
      if (!has(n)) { if ((b SUBSEP cls[j]) in refused) printf "| %s | %s | refused: %s | | | | | | | |\n", trs[i], cls[j], why[n]; continue }
      t = med(n, "s/op"); pk = med(n, "peak-B"); apk = med(b "/anymcp", "peak-B")
      printf "| %s | %s | %s | %s | %s | %s | %g | %s | %s | %s |\n", trs[i], cls[j] == "anymcp" ? "**anymcp**" : cls[j], human_t(t),
        ratio(t, med(b "/floor", "s/op")), ratio(t, med(b "/anymcp", "s/op")), human_b(med(n, "B/op")), med(n, "allocs/op"),
        pk < 0 ? "–" : human_b(pk), pk < 0 ? "–" : sprintf("%.2f×", pk / payload), cls[j] == "floor" ? "–" : ratio(pk, apk)
    }
  }

  if (has("ConcurrentCalls/http-json/anymcp")) {
    print "\n## 64 callers on one connected client, Streamable HTTP with JSON answers\n"
    print "Each client with the HTTP client it uses by default: anymcp its own pool (128 idle connections per"
    print "host), go-sdk, mcp-go and the floor net/http's defaults (2 idle per host); floor-pooled is the floor"
    print "with 64 idle connections per host. TCP connections are counted by the server (ConnState)."
    print ""
    print "| client | calls/s | ÷ floor | ÷ floor-pooled | ÷ anymcp | time per call (wall, all callers) | TCP connections opened | new connections per 1000 calls | B/op | allocs/op |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    split("floor floor-pooled anymcp gosdk mcpgo", cls, " ")
    b = "ConcurrentCalls/http-json"
    for (j = 1; j <= 5; j++) {
      n = b "/" cls[j]; if (!has(n)) continue
      r = med(n, "calls/s")
      printf "| %s | %s | %s | %s | %s | %s | %g | %.3g | %s | %g |\n", cls[j] == "anymcp" ? "**anymcp**" : cls[j], human_r(r),
        ratio(r, med(b "/floor", "calls/s")), ratio(r, med(b "/floor-pooled", "calls/s")), ratio(r, med(b "/anymcp", "calls/s")),
        human_t(med(n, "s/op")), med(n, "tcp-conns"), med(n, "new-conns/kcall"), human_b(med(n, "B/op")), med(n, "allocs/op")
    }
  }

  if (has("IdleHeap/http-json/anymcp")) {
    print "\n## An idle connected client (after connect and one call), per connection, over 50 at once\n"
    print "The server runs in a process of its own: every figure is the client's alone. live = live heap objects"
    print "after a GC; heap = heap spans in use; stacks = goroutine stacks; TCP = descriptors this process holds."
    print ""
    print "| transport | client | live heap | live − floor | live ÷ lowest peer | heap in use | stacks | goroutines | TCP connections |"
    print "|---|---|---|---|---|---|---|---|---|"
    nk = split("http-json http-listen legacy-sse modern", kinds, " ")
    split("Streamable HTTP (2025-11-25);Streamable HTTP (2025-11-25), GET stream open;HTTP+SSE (2024-11-05);Streamable HTTP (2026-07-28)", kl, ";")
    split("floor anymcp gosdk mcpgo", cls, " ")
    for (i = 1; i <= nk; i++) {
      b = "IdleHeap/" kinds[i]
      if (!has(b "/anymcp")) continue
      g = med(b "/gosdk", "live-B/conn"); m = med(b "/mcpgo", "live-B/conn")
      low = (g >= 0 && (m < 0 || g < m)) ? g : m
      for (j = 1; j <= 4; j++) {
        n = b "/" cls[j]; if (!has(n)) continue
        lv = med(n, "live-B/conn"); fl = med(b "/floor", "live-B/conn")
        printf "| %s | %s | %s | %s | %s | %s | %s | %g | %g |\n", kl[i], cls[j] == "anymcp" ? "**anymcp**" : cls[j], human_b(lv),
          cls[j] == "floor" ? "–" : signed(human_b(lv - fl)), cls[j] == "anymcp" ? ratio(lv, low) : "–",
          human_b(med(n, "heap-B/conn")), human_b(med(n, "stack-B/conn")), med(n, "goroutines/conn"), med(n, "tcp/conn")
      }
    }
  }

  print "\n## Every benchmark: time, bytes and allocations per op, ÷ anymcp and above the floor\n"
  print "Over HTTP, CallTool, Connect and ConcurrentCalls run the server in this process: its bytes and"
  print "allocations are in every row, the floor's included, and cancel out of the − floor columns."
  print "BigResult runs every server in a process of its own."
  print ""
  print "| benchmark | transport | client | time | B/op | allocs/op | time ÷ anymcp | B/op ÷ anymcp | allocs ÷ anymcp | time ÷ floor | time − floor | B − floor | allocs − floor |"
  print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= nn; i++) {
    n = order[i]; if (split(n, p, "/") != 3 || p[1] == "IdleHeap" || n ~ /=/) continue
    b = p[1] "/" p[2]; c = p[3]
    t = med(n, "s/op"); by = med(n, "B/op"); al = med(n, "allocs/op")
    at = med(b "/anymcp", "s/op"); ab = med(b "/anymcp", "B/op"); aa = med(b "/anymcp", "allocs/op")
    ft = med(b "/floor", "s/op"); fb = med(b "/floor", "B/op"); fa = med(b "/floor", "allocs/op")
    if (c == "floor") { dt = "–"; db = "–"; da = "–" }
    else { dt = signed(human_t(t - ft)); db = signed(human_b(by - fb)); da = signed(sprintf("%g", al - fa)) }
    printf "| %s | %s | %s | %s | %s | %g | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], c == "anymcp" ? "**anymcp**" : c,
      human_t(t), human_b(by), al, ratio(t, at), ratio(by, ab), ratio(al, aa), ratio(t, ft), dt, db, da
  }
  for (k in why) printf "\nREFUSED: %s: %s\n", k, why[k]
}
