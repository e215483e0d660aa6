// h2spec, the HTTP/2 conformance suite (RFC 9113, RFC 7541) herd serve is checked with,
// built by scripts/build-h2spec.sh. v2.2.1 is the newest release the Go module system can
// name: from v2.3.0 on, h2spec's go.mod declares the path without /v2, so those tags are
// reachable only as pseudo-versions of commits, which a module proxy need not serve. What it
// imports is pinned to the revisions of h2spec's own Gopkg.lock (golang.org/x/sys to the
// oldest that go-isatty builds with), all of which build with Debian 12's Go 1.19.
module herd.invalid/h2spec-build

go 1.19

require github.com/summerwind/h2spec v2.2.1+incompatible

require (
	github.com/fatih/color v0.0.0-20161025120501-bf82308e8c85 // indirect
	github.com/inconshreveable/mousetrap v1.0.0 // indirect
	github.com/mattn/go-colorable v0.1.0 // indirect
	github.com/mattn/go-isatty v0.0.4 // indirect
	github.com/spf13/cobra v0.0.0-20170118185516-dc208f4211e7 // indirect
	github.com/spf13/pflag v1.0.3 // indirect
	golang.org/x/net v0.0.0-20161104230106-55a3084c9119 // indirect
	golang.org/x/sys v0.5.0 // indirect
)
