package llm

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fitName fits a name to the provider's charset and length: each refused
// character becomes "_", a first character that may not start a name is
// preceded by "_", and a name too long is cut and ends with a hash of
// the whole, so that two long names stay apart.
func fitName(name string, r *rules) (string, []Change) {
	var b strings.Builder
	for i := 0; i < len(name); {
		ru, size := utf8.DecodeRuneInString(name[i:])
		if ru < 0x80 && r.nameChars(byte(ru)) {
			b.WriteByte(byte(ru))
		} else {
			b.WriteByte('_')
		}
		i += size
	}
	out := b.String()
	if out == "" {
		out = "tool"
	}
	if r.nameStart && !(out[0] == '_' || out[0] >= 'a' && out[0] <= 'z' || out[0] >= 'A' && out[0] <= 'Z') {
		out = "_" + out
	}
	if len(out) > r.nameMax {
		out = out[:r.nameMax-9] + "_" + shortHash(name)
	}
	if out == name {
		return out, nil
	}
	return out, []Change{{Action: Renamed, Why: renameWhy(name, out)}}
}

func renameWhy(from, to string) string {
	return fmt.Sprintf("%q fitted to the target's rules for names: %q", from, to)
}

// fitDescription cuts a description to the provider's limit, at a
// character boundary, ending it with "…".
func fitDescription(d string, r *rules) (string, []Change) {
	if r.descMax == 0 || utf8.RuneCountInString(d) <= r.descMax {
		return d, nil
	}
	n := 0
	for i := range d {
		if n == r.descMax-1 {
			return d[:i] + "…", []Change{{Action: Truncated, Why: fmt.Sprintf("the description (%d characters) cut to the target's limit of %d", utf8.RuneCountInString(d), r.descMax)}}
		}
		n++
	}
	return d, nil
}

// uniqueName fits a name and, when another tool of the set already has
// the result, ends it with a counter.
func uniqueName(name string, target Target, used map[string]bool) string {
	r := rulesFor(target.Provider)
	fitted, _ := fitName(name, r)
	if !used[fitted] {
		return fitted
	}
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		base := fitted
		if len(base)+len(suffix) > r.nameMax {
			base = base[:r.nameMax-len(suffix)]
		}
		if !used[base+suffix] {
			return base + suffix
		}
	}
}

func withoutRename(c []Change) []Change {
	out := c[:0:0]
	for _, x := range c {
		if x.Action != Renamed {
			out = append(out, x)
		}
	}
	return out
}
