package bridge

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/anymcp/anymcp/mcp"
)

// A result crosses eras in the bridge: what the upstream's revision puts
// in it and the bridge's upstream Conn has acted on is removed before a
// client of another revision gets it. Everything else is passed on as it
// came.

// statelessOnly are the members of a result that revision 2026-07-28
// defines and the initialize era does not: the bridge's upstream Conn has
// acted on them (resultType, the caching hints), and an initialize-era
// client has no use for them.
var statelessOnly = []string{"resultType", "ttlMs", "cacheScope"}

// statelessOnlyMeta are the reserved _meta keys of a 2026-07-28 result
// that the initialize era does not define (the server's identity, which
// that era's client learnt from initialize).
var statelessOnlyMeta = []string{mcp.MetaServerInfo}

// forInitializeEra returns a stateless upstream's result as a client of
// the initialize era gets it: without statelessOnly and statelessOnlyMeta.
func forInitializeEra(raw json.RawMessage) json.RawMessage {
	return without(raw, statelessOnly, statelessOnlyMeta)
}

// withoutTaskMeta returns the result of a task the bridge waited for (a
// 2025-11-25 upstream's tasks/result) without its _meta related-task,
// which names a task the client, of revision 2026-07-28, never asked for.
func withoutTaskMeta(raw json.RawMessage) json.RawMessage {
	return without(raw, nil, []string{mcp.MetaRelatedTask})
}

// without returns the result raw less its members and its _meta keys
// metaKeys (a _meta emptied so goes too). The rest, the host's own _meta
// keys included, is kept as it came; a result with nothing to remove, or
// that is not a JSON object, is returned unchanged.
func without(raw json.RawMessage, members, metaKeys []string) json.RawMessage {
	if !holdsAny(raw, members, metaKeys) {
		return raw // the common case, decided without decoding
	}
	return withoutMaps(raw, members, metaKeys)
}

// withoutMaps is without through maps, for any result.
func withoutMaps(raw json.RawMessage, members, metaKeys []string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	changed := false
	for _, k := range members {
		if _, ok := m[k]; ok {
			delete(m, k)
			changed = true
		}
	}
	if v, ok := m["_meta"]; ok && len(metaKeys) > 0 {
		var meta map[string]json.RawMessage
		if json.Unmarshal(v, &meta) == nil && meta != nil {
			n := len(meta)
			for _, k := range metaKeys {
				delete(meta, k)
			}
			switch {
			case len(meta) == n:
			case len(meta) == 0:
				delete(m, "_meta")
				changed = true
			default:
				m["_meta"] = encodeRaw(meta)
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	return encodeRaw(m)
}

// encodeRaw encodes m without escaping HTML characters, so that the
// members' text stays as the upstream wrote it.
func encodeRaw(m map[string]json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(m) // the members were decoded from JSON: they encode
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// holdsAny reports whether raw, a JSON object, has a member named in
// members or a _meta with a key in metaKeys: whether without may have
// anything to remove. false for anything that is not an object.
func holdsAny(raw json.RawMessage, members, metaKeys []string) bool {
	found := false
	eachMember(raw, func(m member) bool {
		switch {
		case slices.Contains(members, m.key):
			found = true
		case m.key == "_meta" && len(metaKeys) > 0:
			eachMember(m.val, func(mm member) bool {
				found = slices.Contains(metaKeys, mm.key)
				return !found
			})
		}
		return !found
	})
	return found
}
