package pin

import (
	"context"
	"encoding/json"
)

// Filter checks a listing of tools, as a gateway or a host does before it
// shows them: def gives each item's key and definition as the server
// sent it. It returns the items that passed, in order, and one error per
// item held back (a *ChangedError or a *NotPinnedError, in order). The
// tools seen for the first time are pinned with one Save; when it fails,
// or the Store cannot be read, err says so and nothing is kept.
func Filter[T any](ctx context.Context, p *Pins, items []T, def func(T) (key string, raw json.RawMessage)) (kept []T, held []error, err error) {
	batch := make([]item, len(items))
	for i, t := range items {
		batch[i].key, batch[i].raw = def(t)
	}
	res, err := p.check(ctx, batch)
	if err != nil {
		return nil, nil, err
	}
	kept = make([]T, 0, len(items))
	for i, r := range res {
		if r.err != nil {
			held = append(held, r.err)
			continue
		}
		kept = append(kept, items[i])
	}
	return kept, held, nil
}
