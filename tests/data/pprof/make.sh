#!/bin/sh
# Regenerates the pprof fixtures of tests/formats_pprof.rs with the real Go tools
# (Debian: apt-get install golang-go). The tests read only the files written here, never Go.
#
#   cpu.pb.gz, heap.pb.gz         profiles written by Go's runtime/pprof (gen/main.go)
#   cpu.raw.txt, heap.raw.txt     `go tool pprof -raw` of each, the Go tool's own reading
#   <p>.types                     its sample types in order, the default one marked
#   <p>.<type>.folded             the expected folded stacks per sample type (raw2folded.py)
#
# The workload is timed, so each run writes slightly different profiles; the expected files
# are always made from the profiles written by the same run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$here/gen" && go build -trimpath -o "$tmp/gen" .)
"$tmp/gen" "$tmp/cpu.pb.gz" "$tmp/heap.pb.gz" >/dev/null

rm -f "$here"/*.folded "$here"/*.types "$here"/*.raw.txt
for p in cpu heap; do
    cp "$tmp/$p.pb.gz" "$here/$p.pb.gz"
    go tool pprof -raw "$here/$p.pb.gz" >"$here/$p.raw.txt"
    python3 "$here/raw2folded.py" "$here/$p.raw.txt" "$here/$p"
done
ls -l "$here"
