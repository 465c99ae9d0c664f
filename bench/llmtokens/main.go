// Command llmtokens measures llm.Heuristic against OpenAI's o200k_base and
// cl100k_base encodings (tiktoken-go, encodings embedded) over tool
// definitions, descriptions and results of this repository: the numbers
// of docs/llm-results.md. It is a module of its own, so that the
// tokenizer never reaches the library's go.mod.
//
//	cd bench/llmtokens && GOWORK=off go run .          # the error table
//	GOWORK=off go run . fit                            # least-squares weights
//	GOWORK=off go run . holdout                        # fitted on half, tested on the other
//	GOWORK=off go run . ratio                          # bytes per token, by kind
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anymcp/anymcp/llm"
	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// root is the repository, from bench/llmtokens.
const root = "../.."

type sample struct {
	kind, name, text string
}

func corpus() []sample {
	var out []sample
	var sj struct {
		Servers []struct {
			Server string
			Tools  []json.RawMessage
		}
	}
	b, _ := os.ReadFile(filepath.Join(root, "llm/testdata/servers.json"))
	json.Unmarshal(b, &sj)
	servers := map[string][]json.RawMessage{}
	for _, s := range sj.Servers {
		servers[s.Server] = s.Tools
	}
	for s, tools := range servers {
		for i, t := range tools {
			var m map[string]any
			json.Unmarshal(t, &m)
			w, _ := json.Marshal(map[string]any{"name": m["name"], "description": m["description"], "input_schema": m["inputSchema"]})
			out = append(out, sample{"tool", fmt.Sprint(s, i), string(w)})
		}
	}
	var cat struct {
		Tools []struct{ Name, Description string }
	}
	b, _ = os.ReadFile(filepath.Join(root, "fleet/testdata/catalogue.json"))
	json.Unmarshal(b, &cat)
	for _, t := range cat.Tools {
		out = append(out, sample{"description", t.Name, t.Description})
	}
	var files []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".json")) && !strings.Contains(p, "node_modules") && info.Size() < 200000 {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	for i, f := range files {
		if i%5 != 0 {
			continue
		}
		b, _ := os.ReadFile(f)
		out = append(out, sample{"result", f, string(b)})
	}
	return out
}

func features(text string) []float64 {
	var words, letters, digits, punct, spaces, newlines, other, pruns float64
	inWord, inPunct := false, false
	for i := 0; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf {
			_, n := utf8.DecodeRuneInString(text[i:])
			other++
			i += n
			inWord, inPunct = false, false
			continue
		}
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
			if !inWord {
				words++
			}
			inWord, inPunct = true, false
			i++
			continue
		case c >= '0' && c <= '9':
			digits++
		case c == ' ' || c == '\t':
			if i+1 >= len(text) || !(text[i+1] >= 'a' && text[i+1] <= 'z' || text[i+1] >= 'A' && text[i+1] <= 'Z') {
				spaces++
			}
		case c == '\n' || c == '\r':
			newlines++
		default:
			punct++
			if !inPunct {
				pruns++
			}
			inPunct = true
			inWord = false
			i++
			continue
		}
		inWord, inPunct = false, false
		i++
	}
	return []float64{words, letters, digits, punct, spaces, newlines, other, pruns}
}

// fit solves min sum_i (w·x_i - y_i)^2 / y_i  (relative weighting).
func fit(xs [][]float64, ys []float64) []float64 {
	k := len(xs[0])
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, k+1)
	}
	for n, x := range xs {
		if ys[n] == 0 {
			continue
		}
		wt := 1 / ys[n]
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				a[i][j] += wt * x[i] * x[j]
			}
			a[i][k] += wt * x[i] * ys[n]
		}
	}
	for i := 0; i < k; i++ {
		a[i][i] += 1e-6
		p := i
		for r := i + 1; r < k; r++ {
			if math.Abs(a[r][i]) > math.Abs(a[p][i]) {
				p = r
			}
		}
		a[i], a[p] = a[p], a[i]
		for r := 0; r < k; r++ {
			if r != i {
				f := a[r][i] / a[i][i]
				for c := i; c <= k; c++ {
					a[r][c] -= f * a[i][c]
				}
			}
		}
	}
	w := make([]float64, k)
	for i := range w {
		w[i] = a[i][k] / a[i][i]
	}
	return w
}

func main() {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	if len(os.Args) > 1 && os.Args[1] == "ratio" {
		ratio()
		return
	}
	enc, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		panic(err)
	}
	cl, _ := tiktoken.GetEncoding("cl100k_base")
	cs := corpus()
	var xs [][]float64
	var ys []float64
	for _, s := range cs {
		xs = append(xs, features(s.text))
		ys = append(ys, float64(len(enc.Encode(s.text, nil, nil))))
	}
	if len(os.Args) > 1 && os.Args[1] == "fit" {
		fmt.Printf("weights (words letters digits punct spaces newlines other): %.3f\n", fit(xs, ys))
	}
	if len(os.Args) > 1 && os.Args[1] == "holdout" {
		var ex [][]float64
		var ey []float64
		for i := range xs {
			if i%2 == 0 {
				ex, ey = append(ex, xs[i]), append(ey, ys[i])
			}
		}
		w := fit(ex, ey)
		var abs []float64
		for i := range xs {
			if i%2 == 1 && ys[i] > 0 {
				e := 0.0
				for j := range w {
					e += w[j] * xs[i][j]
				}
				abs = append(abs, math.Abs(math.Round(e)-ys[i])/ys[i])
			}
		}
		sort.Float64s(abs)
		m := 0.0
		for _, a := range abs {
			m += a
		}
		fmt.Printf("held out: fitted on %d, tested on %d: mean|err| %.1f%% p90 %.1f%%\n", len(ex), len(abs), 100*m/float64(len(abs)), 100*abs[len(abs)*9/10])
		return
	}
	report := func(name string, est func(string) int, ref func(string) int) {
		for _, kind := range []string{"tool", "description", "result", "all"} {
			var errs []float64
			var sumE, sumR float64
			for _, s := range cs {
				if kind != "all" && s.kind != kind {
					continue
				}
				r := float64(ref(s.text))
				if r == 0 {
					continue
				}
				e := float64(est(s.text))
				errs = append(errs, (e-r)/r)
				sumE += e
				sumR += r
			}
			sort.Float64s(errs)
			abs := make([]float64, len(errs))
			mean := 0.0
			for i, e := range errs {
				abs[i] = math.Abs(e)
				mean += abs[i]
			}
			sort.Float64s(abs)
			fmt.Printf("%-28s %-11s n=%4d mean|err|=%5.1f%% p90|err|=%5.1f%% max|err|=%5.1f%% total %+5.1f%%\n", name, kind, len(errs),
				100*mean/float64(len(errs)), 100*abs[len(abs)*9/10], 100*abs[len(abs)-1], 100*(sumE-sumR)/sumR)
		}
	}
	{
		total := 0
		for _, s := range cs {
			total += len(s.text)
		}
		t0 := time.Now()
		for _, s := range cs {
			llm.Heuristic{}.Tokens(s.text)
		}
		t1 := time.Now()
		for _, s := range cs {
			enc.Encode(s.text, nil, nil)
		}
		t2 := time.Now()
		fmt.Printf("corpus %d bytes: heuristic %v (%.0f MB/s), o200k %v (%.1f MB/s)\n", total, t1.Sub(t0), float64(total)/t1.Sub(t0).Seconds()/1e6, t2.Sub(t1), float64(total)/t2.Sub(t1).Seconds()/1e6)
	}
	o200 := func(s string) int { return len(enc.Encode(s, nil, nil)) }
	c100 := func(s string) int { return len(cl.Encode(s, nil, nil)) }
	report("heuristic vs o200k", llm.Heuristic{}.Tokens, o200)
	report("bytes/4 vs o200k", func(s string) int { return (len(s) + 3) / 4 }, o200)
	report("heuristic vs cl100k", llm.Heuristic{}.Tokens, c100)
	report("o200k vs cl100k", o200, c100)
}

// ratio prints the bytes per o200k_base token of each kind of text.
func ratio() {
	enc, _ := tiktoken.GetEncoding("o200k_base")
	by := map[string][2]int{}
	for _, s := range corpus() {
		r := by[s.kind]
		r[0] += len(s.text)
		r[1] += len(enc.Encode(s.text, nil, nil))
		by[s.kind] = r
	}
	for k, r := range by {
		fmt.Printf("%s: %d bytes, %d tokens, %.2f bytes/token\n", k, r[0], r[1], float64(r[0])/float64(r[1]))
	}
}
