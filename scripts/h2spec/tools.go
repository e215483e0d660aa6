//go:build tools

// Package tools pins h2spec, the HTTP/2 conformance suite herd serve is checked with, and the
// versions of what it imports, for scripts/build-h2spec.sh. Nothing here is herd's own code.
package tools

import _ "github.com/summerwind/h2spec/cmd/h2spec"
