#!/usr/bin/env bash
# Makes this folder's files: one folded profile packed by the real tools (Debian 12: xz 5.4,
# bzip2 1.0.8, lz4 1.9.4, zstd 1.5.4, gzip 1.12), once and in layers.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'main;work 3\nmain;idle 1\n' >"$work/packed.folded"
xz -9 <"$work/packed.folded" >packed.folded.xz
bzip2 -9 <"$work/packed.folded" >packed.folded.bz2
lz4 -9 -q <"$work/packed.folded" >packed.folded.lz4
# Layers: gzip inside xz, zstd inside bzip2, gzip inside gzip inside LZ4.
gzip -9n <"$work/packed.folded" | xz -9 >layered.folded.gz.xz
zstd -q -19 <"$work/packed.folded" | bzip2 -9 >layered.folded.zst.bz2
gzip -9n <"$work/packed.folded" | gzip -9n | lz4 -9 -q >layered.folded.gz.gz.lz4
# Four layers, one more than is unpacked.
gzip -9n <"$work/packed.folded" | gzip -9n | gzip -9n | gzip -9n >deep.folded.gz.gz.gz.gz
