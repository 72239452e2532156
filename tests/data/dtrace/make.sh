#!/usr/bin/env bash
# Regenerates the expectations of this folder with inferno's own command (not flamesite):
#   cargo install inferno --version 0.12.8 --root /tmp/inferno && PATH=/tmp/inferno/bin:$PATH bash make.sh
set -euo pipefail
cd "$(dirname "$0")"
gzip -dc example-dtrace-stacks.txt.gz | inferno-collapse-dtrace | gzip -9 -n >example-dtrace-stacks.folded.gz
inferno-collapse-dtrace stack-ustack.txt >stack-ustack.folded
