#!/bin/sh
# Regenerates the Go text count profiles and their protobuf forms: main.go parks goroutines
# in known places, then writes the goroutine and threadcreate profiles of that moment with
# runtime/pprof, as the text of debug=1 (NAME.txt, what /debug/pprof/NAME?debug=1 serves)
# and the protobuf of debug=0 (NAME.pb.gz). Made with Debian 12's golang-go (Go 1.19.8).
# The tests compare flamesite's reading of each text with its reading of the protobuf.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/gotext" .
"$tmp/gotext"
