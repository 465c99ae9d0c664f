module github.com/anymcp/anymcp/bench

go 1.26

replace github.com/anymcp/anymcp => ../

require (
	github.com/anymcp/anymcp v0.0.0-00010101000000-000000000000
	github.com/r3labs/sse/v2 v2.10.0
	github.com/tmaxmax/go-sse v0.11.0
)

require (
	golang.org/x/net v0.0.0-20191116160921-f9c825593386 // indirect
	gopkg.in/cenkalti/backoff.v1 v1.1.0 // indirect
)
