// Package docs holds no code: its tests keep README.md, SECURITY.md, the
// guides under docs/ and the package documentation short and their links
// whole (docs_test.go).
package docs
