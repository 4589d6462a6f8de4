#!/usr/bin/env bash
# Runs the cargo-fuzz targets (`redact`, `credentials`, `dispatch`) one after the other.
#   scripts/fuzz.sh [seconds per target, default 600] [target…]
# cargo-fuzz needs nightly compiler flags: a nightly toolchain is used when rustup has one,
# otherwise stable with RUSTC_BOOTSTRAP=1. Findings land in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(redact credentials dispatch)

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
if rustup run nightly rustc --version >/dev/null 2>&1; then
  fuzz=(cargo +nightly fuzz)
else
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi

for target in "${targets[@]}"; do
  mkdir -p "corpus/$target"
  echo "== $target: ${seconds}s"
  # One process; the corpus grows in corpus/<target> (minimise with `cargo fuzz cmin <target>`).
  "${fuzz[@]}" run -O "$target" "corpus/$target" -- -max_total_time="$seconds" -print_final_stats=1
done
