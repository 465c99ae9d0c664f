package wire

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Sent speaks of the latest attempt: a body read to its end is sent; a
// body taken anew from GetBody is not, until it is read to its end too.
func TestSentBodySpeaksOfTheLatestAttempt(t *testing.T) {
	req, body, err := NewPost(context.Background(), "POST", "http://127.0.0.1/mcp", []byte(`{"jsonrpc":"2.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.ContentLength != 17 || req.GetBody == nil {
		t.Fatalf("ContentLength %d, GetBody set %v; want 17, true", req.ContentLength, req.GetBody != nil)
	}
	if body.Sent() {
		t.Fatal("sent before anything was read")
	}
	buf := make([]byte, 16)
	if _, err := req.Body.Read(buf); err != nil || body.Sent() {
		t.Fatalf("after 16 of 17 bytes: err %v, sent %v; want nil, false", err, body.Sent())
	}
	if b, _ := io.ReadAll(req.Body); string(b) != "}" || !body.Sent() {
		t.Fatalf("the rest %q, sent %v; want \"}\", true", b, body.Sent())
	}
	again, _ := req.GetBody()
	if body.Sent() {
		t.Fatal("a new attempt began: its body is not sent yet")
	}
	again2, _ := req.GetBody() // a third attempt, from the second's GetBody as net/http would not, but may
	if b, _ := io.ReadAll(again); string(b) != `{"jsonrpc":"2.0"}` || body.Sent() {
		t.Fatalf("the second attempt read %q, sent %v; want the whole body, false (the third is the latest)", b, body.Sent())
	}
	io.ReadAll(again2)
	if !body.Sent() {
		t.Fatal("the latest attempt read its body to the end; want sent")
	}
}

func TestMayHaveRunKeepsTheError(t *testing.T) {
	err := MayHaveRun(context.DeadlineExceeded)
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v: want it to match ErrOutcomeUnknown and context.DeadlineExceeded", err)
	}
	if MayHaveRun(err) != err || MayHaveRun(nil) != nil {
		t.Fatal("an error that already matches, or nil, is returned as is")
	}
}
