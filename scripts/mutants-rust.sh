#!/usr/bin/env bash
# Mutation testing of the Rust core with cargo-mutants: each mutant is one small change to the
# code (a function's body replaced by a default value, an operator swapped, a condition made
# always true or false, a match arm deleted), built and tested; a mutant that no test fails on
# is a piece of behaviour no test checks.
#
#   scripts/mutants-rust.sh [MODULE ...]   MODULE: a folder or file under src/, e.g. graph,
#                                          store, derive, archive, output, ingest/decode,
#                                          derive/changes.rs (default: those six)
#   scripts/mutants-rust.sh --record ...   the same, then writes each module's score into
#                                          scripts/mutants-rust-scores.txt
#
# Each module's mutants are tested by the library's unit tests (cargo nextest run --lib; set
# FLAMESITE_MUTANTS_TESTS="--lib --test integration" to add the integration tests, about
# seven minutes more a mutant), two jobs at a time, each in a copy of the tree (cargo-mutants'
# own, built once per job). The
# score of a module is the share of its viable mutants that a test caught (a mutant that
# does not compile is not counted; one that times out counts as missed). The script fails
# when a module's score is below the one recorded for it in scripts/mutants-rust-scores.txt;
# the mutants that survived are listed in target/mutants/MODULE/mutants.out/missed.txt, to be
# killed by a test that asserts behaviour (or, when a mutant cannot change behaviour, left
# with the reason in the commit that records the score).
#
# It is slow: every mutant rebuilds the library's tests and runs them (about a minute each on
# this 2-core machine), and the six modules have about 4,200 mutants (cargo mutants --list:
# graph 827, store 1,015, derive 410, archive 197, output 274, ingest/decode 1,463), so a
# module takes hours to days. It is not part of the test command; docs/BENCHMARKS.md ("Mutation testing of
# the Rust core") gives the last scores and when they were measured.
# Needs cargo-mutants (installed into target/tools when missing) and cargo-nextest.
set -euo pipefail
cd "$(dirname "$0")/.."
record=false
if [ "${1:-}" = "--record" ]; then
  record=true
  shift
fi
modules=${*:-graph store derive archive output ingest/decode}
export PATH="$PWD/target/tools/bin:$PATH"
if ! command -v cargo-mutants >/dev/null; then
  cargo install --locked --quiet cargo-mutants@27.1.0 --root target/tools || {
    echo "error: cargo-mutants could not be installed: cargo install --locked cargo-mutants@27.1.0" >&2
    exit 1
  }
fi
scores=scripts/mutants-rust-scores.txt
failed=""
for m in $modules; do
  path=src/$m
  if [ -d "$path" ]; then
    files=(--file "$path/**/*.rs")
  elif [ -f "$path" ]; then
    files=(--file "$path")
  else
    echo "error: no $path" >&2
    exit 1
  fi
  out=target/mutants/${m//\//-}
  mkdir -p "$out"
  cargo mutants --test-tool nextest --jobs 2 --timeout-multiplier 3 --output "$out" --no-shuffle \
    "${files[@]}" -- ${FLAMESITE_MUTANTS_TESTS:---lib} > "$out/log.txt" 2>&1 || true
  result="$out/mutants.out/outcomes.json"
  [ -f "$result" ] || { echo "error: cargo-mutants gave no $result (see $out/log.txt)" >&2; exit 1; }
  read -r caught missed timeout unviable < <(python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
print(o.get("caught", 0), o.get("missed", 0), o.get("timeout", 0), o.get("unviable", 0))' "$result")
  viable=$((caught + missed + timeout))
  score=$(python3 -c "print(f'{100 * $caught / max($viable, 1):.1f}')")
  echo "mutants $m: $caught caught, $missed missed, $timeout timed out, $unviable unviable: score $score%"
  recorded=$(awk -v m="$m" '$1 == m { print $2 }' "$scores" 2>/dev/null || true)
  if $record; then
    { grep -v "^$m " "$scores" 2>/dev/null || true; echo "$m $score $(date -u +%F) $(git rev-parse --short HEAD)"; } | sort > "$scores.new"
    mv "$scores.new" "$scores"
  elif [ -n "$recorded" ] && python3 -c "import sys; sys.exit(0 if $score < $recorded else 1)"; then
    echo "mutants $m: the score fell from $recorded% to $score%; the survivors: $out/mutants.out/missed.txt" >&2
    failed="$failed $m"
  fi
done
[ -z "$failed" ] || { echo "mutants: scores fell in:$failed" >&2; exit 1; }
