package jsonrpc_test

import (
	"errors"
	"fmt"

	"github.com/anymcp/anymcp/jsonrpc"
)

// A bridge whose upstream lost the answer says so in the error's data;
// the error then matches ErrOutcomeUnknown, and stays an *Error.
func ExampleError_Outcome() {
	msg, _ := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,
		"message":"the upstream's answer was lost; the request may have run",
		"data":{"io.github.anymcp/outcome":"unknown"}}}`))
	var err error = msg.Error
	fmt.Println(msg.Error.Outcome())
	fmt.Println(errors.Is(err, jsonrpc.ErrOutcomeUnknown))
	var rpcErr *jsonrpc.Error
	fmt.Println(errors.As(err, &rpcErr), rpcErr.Code)
	// Output:
	// unknown
	// true
	// true -32603
}
