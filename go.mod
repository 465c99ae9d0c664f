module github.com/anymcp/anymcp

go 1.26.0

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/go-json-experiment/json v1.27.2
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/hashicorp/go-retryablehttp v0.7.8
	go.uber.org/goleak v1.3.0
	golang.org/x/oauth2 v0.37.0
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
