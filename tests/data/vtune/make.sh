#!/usr/bin/env bash
# Regenerates the expectation with fold-vtune.py, this folder's independent reading of the
# export (not flamesite, not inferno). FlameGraph's stackcollapse-vtune.pl cannot read this
# file (see README.md). Needs python3:
#   bash make.sh
set -euo pipefail
cd "$(dirname "$0")"
python3 fold-vtune.py vtune.csv >vtune.folded
