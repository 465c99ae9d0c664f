package llm

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// cap cuts the text parts, joined, to opts.MaxBytes: the head (three
// quarters) and the tail (one quarter) stay, a notice between them says
// what was cut and how to read it. The whole text goes to the store when
// there is one; a store that fails or refuses loses only the cut part,
// and the notice says so.
func (b *builder) cap(ctx context.Context) error {
	limit := b.opts.MaxBytes
	if limit < 0 {
		return nil
	}
	full := joinText(b.parts)
	if len(full) <= limit {
		return nil
	}
	headN := validPrefixLen(full, limit-limit/4)
	if i := strings.LastIndexByte(full[:headN], '\n'); i > 0 && headN-i < limit/10 {
		headN = i + 1 // end the head at a line end when one is near
	}
	tailStart := len(full) - (limit - headN)
	for tailStart < len(full) && !utf8.RuneStart(full[tailStart]) {
		tailStart++
	}
	if j := strings.IndexByte(full[tailStart:], '\n'); j >= 0 && j < limit/10 && tailStart+j+1 < len(full) {
		tailStart += j + 1 // and start the tail at a line start
	}
	cut := tailStart - headN
	var notice string
	kept := false
	if b.opts.Store != nil {
		h, err := b.opts.Store.Put(ctx, full)
		switch {
		case err == nil:
			kept = true
			b.handles = append(b.handles, h)
			notice = fmt.Sprintf("[%d bytes cut here (bytes %d to %d of %d). The whole result is kept as handle %q: "+
				"call the %s tool with {\"handle\":%q,\"offset\":%d,\"length\":%d} to read the cut part.]",
				cut, headN, tailStart, len(full), h.ID, ReadResultName, h.ID, headN, min(cut, readChunk(limit)))
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			b.change("", ResultCut, "the store did not keep the whole text: "+clip(err.Error(), 200))
		}
	}
	if !kept {
		notice = fmt.Sprintf("[%d bytes cut here (bytes %d to %d of %d): the result was over the cap of %d bytes, and the cut part was not kept.]",
			cut, headN, tailStart, len(full), limit)
	}
	why := fmt.Sprintf("the text is %d bytes, over the cap of %d: bytes %d to %d cut", len(full), limit, headN, tailStart)
	if kept {
		why += ", the whole kept as handle " + b.handles[0].ID
	}
	b.change("/content", ResultCut, why)

	text := full[:headN] + "\n" + notice + "\n" + full[tailStart:]
	out := make([]part, 0, len(b.parts))
	placed := false
	for _, p := range b.parts {
		if p.kind != partText {
			out = append(out, p)
		} else if !placed {
			out = append(out, part{kind: partText, text: text})
			placed = true
		}
	}
	b.parts = out
	return nil
}

// readChunk is the length a read_result call is invited to ask for: half
// the cap, so that the answer is never cut again.
func readChunk(limit int) int { return max(limit/2, 1024) }

// validPrefixLen is the length of the longest prefix of s of at most n
// bytes that does not split a UTF-8 sequence.
func validPrefixLen(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

func validPrefix(s string, n int) string { return s[:validPrefixLen(s, n)] }
