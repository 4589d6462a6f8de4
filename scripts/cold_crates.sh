#!/usr/bin/env bash
# The README's first command, cold: how many crates `cargo run --example quickstart` compiles
# into an empty target directory, and how long that build takes (wall clock, on whatever else
# the machine is doing). `--max N` fails when more than N crates are compiled.
#
#   scripts/cold_crates.sh [--max N]
#
# The count is cargo's own: one `Compiling` line per crate built (build scripts included in
# their crate's line), the same lines a new user sees scroll by.
set -euo pipefail
cd "$(dirname "$0")/.."
max=""
if [ "${1:-}" = "--max" ]; then
  max=${2:?--max needs a number}
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
start=$(date +%s)
if ! CARGO_TARGET_DIR="$dir/target" CARGO_TERM_COLOR=never cargo build --example quickstart 2>"$dir/log"; then
  cat "$dir/log" >&2
  exit 1
fi
secs=$(($(date +%s) - start))
crates=$(grep -c '^ *Compiling ' "$dir/log" || true)
echo "cargo build --example quickstart, cold: $crates crates compiled in ${secs} s ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
if [ -n "$max" ] && [ "$crates" -gt "$max" ]; then
  echo "error: the quickstart compiles $crates crates cold, more than $max: a dependency of a default workspace member (or a feature it asks for) reached the quickstart's build" >&2
  exit 1
fi
