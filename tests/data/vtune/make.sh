#!/usr/bin/env bash
# Regenerates the expectation with inferno's own command (not flamesite):
#   cargo install inferno --version 0.12.8 --root /tmp/inferno && PATH=/tmp/inferno/bin:$PATH bash make.sh
set -euo pipefail
cd "$(dirname "$0")"
inferno-collapse-vtune vtune.csv >vtune.folded
