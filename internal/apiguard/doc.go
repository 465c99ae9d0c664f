// Package apiguard holds no code: its test keeps the public API to the
// standard library's types and the module's own (apiguard_test.go), so
// that a host never has to import a dependency of anymcp to use it, and a
// dependency can change without changing the API.
package apiguard
