#!/bin/sh
# Regenerates the pprof fixtures of tests/formats_pprof.rs with the real Go tools
# (Debian: apt-get install golang-go). The tests read only the files written here, never Go.
#
#   cpu.pb.gz, heap.pb.gz         profiles written by Go's runtime/pprof (gen/main.go)
#   cpu.raw.txt, heap.raw.txt     `go tool pprof -raw` of each, the Go tool's own reading
#   <p>.types                     its sample types in order, the default one marked
#   <p>.<type>.folded             the expected folded stacks per sample type (raw2folded.py)
#   labels.pb.gz                  a CPU profile whose samples carry pprof labels (gen/labels:
#                                 thread=worker-1..3 and kind, set with pprof.Do; the main
#                                 goroutine's samples have none)
#   labels.tags.txt               `go tool pprof -tags` of it: each label key with its values
#   labels.thread=V.<type>.folded the expected stacks of the samples labelled thread=V, from
#                                 `go tool pprof -raw -tagfocus=thread=^V$`
#   labels.thread=(none).<type>.folded  those of the samples without a thread label, from
#                                 `go tool pprof -raw -tagignore=thread=.*`
#
# The workload is timed, so each run writes slightly different profiles; the expected files
# are always made from the profiles written by the same run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$here/gen" && go build -trimpath -o "$tmp/gen" .)
"$tmp/gen" "$tmp/cpu.pb.gz" "$tmp/heap.pb.gz" >/dev/null
(cd "$here/gen" && go build -trimpath -o "$tmp/labels" ./labels)
"$tmp/labels" "$tmp/labels.pb.gz" >/dev/null

rm -f "$here"/*.folded "$here"/*.types "$here"/*.raw.txt
for p in cpu heap labels; do
    cp "$tmp/$p.pb.gz" "$here/$p.pb.gz"
    go tool pprof -raw "$here/$p.pb.gz" >"$here/$p.raw.txt"
    python3 "$here/raw2folded.py" "$here/$p.raw.txt" "$here/$p"
done
go tool pprof -tags "$here/labels.pb.gz" >"$here/labels.tags.txt"
for v in worker-1 worker-2 worker-3; do
    go tool pprof -raw "-tagfocus=thread=^$v\$" "$here/labels.pb.gz" >"$tmp/raw.txt"
    python3 "$here/raw2folded.py" "$tmp/raw.txt" "$here/labels.thread=$v"
done
go tool pprof -raw '-tagignore=thread=.*' "$here/labels.pb.gz" >"$tmp/raw.txt"
python3 "$here/raw2folded.py" "$tmp/raw.txt" "$here/labels.thread=(none)"
rm -f "$here"/labels.thread=*.types   # the same as labels.types
ls -l "$here"
