package modern

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// TestTakeAnswers checks the direct hand-over of answers
// (jsonrpc.AnswerTaker): only a response that is the first message of its
// exchange goes to the take function, on Send's goroutine; everything else,
// and a response take declines, comes through Recv in the order sent.
func TestTakeAnswers(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	tests := []struct {
		name    string
		answer  func(w http.ResponseWriter, id string)
		decline bool
		taken   []string // what take got
		recv    []string // what Recv got, in order
	}{
		{
			name:   "JSON body",
			answer: func(w http.ResponseWriter, id string) { writeJSON(w, response(id, `{"n":1}`)) },
			taken:  []string{`response 2 {"n":1}`},
		},
		{
			name:    "JSON body, declined",
			answer:  func(w http.ResponseWriter, id string) { writeJSON(w, response(id, `{"n":1}`)) },
			decline: true,
			taken:   []string{`response 2 {"n":1}`},
			recv:    []string{`response 2 {"n":1}`},
		},
		{
			name:   "JSON batch with a notification first",
			answer: func(w http.ResponseWriter, id string) { writeJSON(w, "["+progress+","+response(id, `{"n":1}`)+"]") },
			recv:   []string{"notification notifications/progress", `response 2 {"n":1}`},
		},
		{
			name: "SSE, the answer first",
			answer: func(w http.ResponseWriter, id string) {
				startSSE(w)(data(response(id, `{"n":1}`)))
			},
			taken: []string{`response 2 {"n":1}`},
		},
		{
			name: "SSE, progress before the answer",
			answer: func(w http.ResponseWriter, id string) {
				ev := startSSE(w)
				ev(data(progress))
				ev(data(response(id, `{"n":1}`)))
			},
			recv: []string{"notification notifications/progress", `response 2 {"n":1}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if m, err := jsonrpc.DecodeMessage(body); err == nil && m.Method == "tools/call" {
					tc.answer(w, m.ID.Raw())
					return
				}
				mcp("s1")(w, r, body)
			})
			tr, ch := dial(t, s, Options{})
			handshake(t, tr, ch) // initialize's answer comes through Recv: no take yet

			var mu sync.Mutex
			var taken []string
			tr.TakeAnswers(func(m *jsonrpc.Message) bool {
				mu.Lock()
				defer mu.Unlock()
				taken = append(taken, describe(m))
				return !tc.decline
			})
			send(t, tr, request(2, "tools/call"))
			mu.Lock()
			got := slices.Clone(taken) // Send returns after the hand-over
			mu.Unlock()
			if !slices.Equal(got, tc.taken) {
				t.Errorf("take got %q, want %q", got, tc.taken)
			}
			for _, want := range tc.recv {
				if got := describe(next(t, ch)); got != want {
					t.Errorf("Recv got %s, want %s", got, want)
				}
			}
			none(t, ch)
		})
	}
}
