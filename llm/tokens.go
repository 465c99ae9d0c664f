package llm

import (
	"unicode"
	"unicode/utf8"
)

// Estimator counts the tokens a text costs a model. A host with a real
// tokenizer, or a provider's count-tokens endpoint, can supply its own.
type Estimator interface {
	Tokens(text string) int
}

// EstimatorFor is the estimator this package uses for a provider: the
// calibrated heuristic (Heuristic). Its method and its error against
// real tokenizers are in docs/llm-results.md.
func EstimatorFor(Provider) Estimator { return Heuristic{} }

// Heuristic estimates tokens in one pass over the bytes, from how many
// words, letters, digits, punctuation marks and runs of them, spaces, line ends and
// non-ASCII characters the text holds, with weights fitted by least
// squares to OpenAI's o200k_base counts over tool definitions and tool
// results (docs/llm-results.md). It allocates nothing.
type Heuristic struct{}

// The fitted weights: tokens per unit of each feature.
const (
	wWord     = 0.739 // a run of ASCII letters
	wLetter   = 0.057
	wDigit    = 1.025
	wPunct    = 0.278
	wPunctRun = 0.329 // a run of punctuation marks
	wSpace    = 0.550 // a space or tab not before a word
	wNewline  = 0.655
	wCJK      = 0.62 // a Chinese, Japanese or Korean character (set apart)
	wSymbol   = 1.0  // any other non-ASCII character
)

// Tokens returns the estimate for text, at least 1 for a non-empty text.
func (Heuristic) Tokens(text string) int {
	var words, letters, digits, punct, pruns, spaces, newlines, cjk, symbols int
	inWord, inPunct := false, false
	for i := 0; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(text[i:])
			i += n
			inPunct = false
			switch {
			case isCJK(r):
				cjk++
				inWord = false
			case unicode.IsLetter(r):
				letters++ // counted as ASCII letters: measured so
				if !inWord {
					words++
				}
				inWord = true
			default:
				symbols++
				inWord = false
			}
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
			if i+1 >= len(text) || !isLetter(text[i+1]) {
				spaces++
			}
		case c == '\n' || c == '\r':
			newlines++
		default:
			punct++
			if !inPunct {
				pruns++
			}
			inWord, inPunct = false, true
			i++
			continue
		}
		inWord, inPunct = false, false
		i++
	}
	t := wWord*float64(words) + wLetter*float64(letters) + wDigit*float64(digits) + wPunct*float64(punct) + wPunctRun*float64(pruns) +
		wSpace*float64(spaces) + wNewline*float64(newlines) +
		wCJK*float64(cjk) + wSymbol*float64(symbols)
	n := int(t + 0.5)
	if n == 0 && text != "" {
		n = 1
	}
	return n
}

// isCJK says whether r is of the scripts that tokenizers split about a
// character at a time: CJK ideographs, kana, hangul, full-width forms.
func isCJK(r rune) bool {
	return r >= 0x2E80 && r <= 0xD7AF || r >= 0xF900 && r <= 0xFAFF || r >= 0xFF00 && r <= 0xFFEF
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
