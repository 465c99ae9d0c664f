module github.com/anymcp/anymcp/bench/llmtokens

go 1.26.0

require (
	github.com/anymcp/anymcp v0.0.0
	github.com/pkoukk/tiktoken-go v0.1.8
	github.com/pkoukk/tiktoken-go-loader v0.0.2
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/dlclark/regexp2 v1.10.0 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	golang.org/x/oauth2 v0.37.0 // indirect
)

replace github.com/anymcp/anymcp => ../..
