#!/usr/bin/env bash
# Reruns every figure of BENCHMARKS.md, the Python SDK's included, and prints the table.
#   scripts/bench.sh            # ~10 minutes on 2 cores (plus the first build of the benches)
# Output: the markdown table on stdout; logs and raw results in target/bench-run/.
# Not part of CI: timings need a quiet machine, and CI machines are not.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
OUT=$(realpath -m "${BENCH_OUT:-$TARGET/bench-run}")
rm -rf "$OUT"
mkdir -p "$OUT"
RESULTS="$OUT/results.txt"
: > "$RESULTS"
CRITERION_ARGS=(--warm-up-time 1 --measurement-time 3)
log() { echo "== $*" >&2; }

machine() {
  echo "- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores visible, $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "- Toolchain: $(rustc -V); Python peer: mcpeye 0.1.5 on $(${PEER_VENV:-/tmp/mcpeye-peer-venv}/bin/python -V 2>&1 || echo 'python (venv not created yet)')"
  echo "- Load average $1: $(cut -d' ' -f1-3 /proc/loadavg)"
}
machine "at start" > "$OUT/machine.md"

log "building the benches"
cargo bench --no-run -q 2>&1 | grep -v '^\s*Executable' >&2 || true

# Harness benches print `RESULT key value` on stdout and a human summary on stderr.
harness() {
  local name=$1; shift
  log "cargo bench --bench $name -- $*"
  cargo bench -q --bench "$name" -- "$@" 2> >(tee -a "$OUT/$name.log" >&2) | tee -a "$OUT/$name.log" | grep '^RESULT' >> "$RESULTS"
}

log "cargo bench --bench overhead (criterion)"
cargo bench -q --bench overhead -- "${CRITERION_ARGS[@]}" > "$OUT/overhead.log" 2>&1
grep -E 'time:|^call/' "$OUT/overhead.log" >&2 || true
log "cargo bench --bench redact -- corpus (criterion; adversarial inputs left out for time)"
cargo bench -q --bench redact -- corpus --warm-up-time 1 --measurement-time 2 > "$OUT/redact.log" 2>&1
log "cargo bench --bench redact_cpu (MB/s of CPU time, like the peer's *_cpu_median)"
cargo bench -q --bench redact_cpu > "$OUT/redact_cpu.log" 2>&1
awk '/^(mixed_1pct|clean): / { c = $1; sub(":", "", c); op = $2; sub(",", "", op); sub("::", "_", op);
       print "RESULT redact_cpu." c "." op "_MBps", $(NF-1) }' "$OUT/redact_cpu.log" >> "$RESULTS"
harness latency 200000 20000 5000
harness flusher 5 3
harness memory 1000000
log "scripts/compile_cost.sh 200 3"
scripts/compile_cost.sh 200 3 2> >(tee -a "$OUT/compile.log" >&2) | grep '^RESULT' >> "$RESULTS"

PEER=../shared/peer-bench/run_all.sh
if [ -x "$PEER" ] || [ -f "$PEER" ]; then
  log "$PEER (Python SDK 0.1.5)"
  OUT_DIR="$OUT/peer" bash "$PEER" > "$OUT/peer.log" 2>&1 || log "the Python peer failed; see $OUT/peer.log"
else
  log "no $PEER: the Python columns stay empty"
fi
machine "at end" | tail -1 >> "$OUT/machine.md"

python3 scripts/bench_table.py "$RESULTS" "$TARGET/criterion" "$OUT/peer" > "$OUT/table.md"
cat "$OUT/machine.md"
echo
cat "$OUT/table.md"
