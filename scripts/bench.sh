#!/usr/bin/env bash
# Reruns every figure of BENCHMARKS.md, the Python SDK's included, and prints the table.
#   scripts/bench.sh               # ~10 minutes on 2 cores (plus the first build of the benches)
#   scripts/bench.sh --peer-only   # only the Python SDK's figures (PEER_QUICK=1: a quick check)
# Output: the markdown table on stdout; logs and raw results in target/bench-run/.
# The Python SDK (mcpeye 0.1.5, from PyPI) runs the project's own scripts/peer-bench/ in a venv
# under target/ (PEER_VENV), created on first use; that needs python3 with venv and pip, and
# access to PyPI. Without them the Rust figures are still measured and the Python columns stay
# empty.
# Not part of CI: timings need a quiet machine, and CI machines are not.
set -euo pipefail
cd "$(dirname "$0")/.."
PEER_ONLY=
case "${1:-}" in
  "") ;;
  --peer-only) PEER_ONLY=1 ;;
  *) echo "usage: scripts/bench.sh [--peer-only]" >&2; exit 2 ;;
esac
TARGET=${CARGO_TARGET_DIR:-target}
OUT=$(realpath -m "${BENCH_OUT:-$TARGET/bench-run}")
rm -rf "$OUT"
mkdir -p "$OUT"
RESULTS="$OUT/results.txt"
: > "$RESULTS"
CRITERION_ARGS=(--warm-up-time 1 --measurement-time 3)
log() { echo "== $*" >&2; }

PEER_SDK=mcpeye==0.1.5
PEER_VENV=$(realpath -m "${PEER_VENV:-$TARGET/peer-venv}")
PEER_PY=$PEER_VENV/bin/python
PEER_NEEDS="python3 with the venv module and pip (Debian/Ubuntu: apt install python3-venv), and access to PyPI for $PEER_SDK"

# A Python with the Python SDK, in a venv of our own: created, and the SDK installed, if missing.
peer_python() {
  local has_sdk='import importlib.metadata as m, sys; sys.exit(m.version("mcpeye") != "0.1.5")'
  if "$PEER_PY" -c "$has_sdk" >/dev/null 2>&1; then
    return 0
  fi
  local host=${PYTHON:-python3}
  if ! command -v "$host" >/dev/null 2>&1; then
    log "no $host found: the Python columns stay empty; they need $PEER_NEEDS"
    return 1
  fi
  log "installing $PEER_SDK from PyPI into $PEER_VENV"
  if ! { [ -x "$PEER_PY" ] || "$host" -m venv "$PEER_VENV"; } >"$OUT/peer-venv.log" 2>&1 ||
    ! "$PEER_PY" -m pip install -q --disable-pip-version-check "$PEER_SDK" >>"$OUT/peer-venv.log" 2>&1; then
    log "could not install $PEER_SDK into $PEER_VENV (see $OUT/peer-venv.log): the Python columns stay empty; they need $PEER_NEEDS"
    return 1
  fi
}

# The Python SDK's figures, as JSON files in $OUT/peer (what bench_table.py reads).
peer() {
  if peer_python; then
    log "scripts/peer-bench/run_all.sh (Python SDK 0.1.5)"
    PEER_VENV="$PEER_VENV" OUT_DIR="$OUT/peer" bash scripts/peer-bench/run_all.sh > "$OUT/peer.log" 2>&1 ||
      log "the Python peer failed; see $OUT/peer.log"
  fi
}

machine() {
  # The CPU family and model as the VM reports them: "AMD EPYC" alone names several generations,
  # and figures bound by memory latency differ between them by 2-3x.
  local cpuid
  cpuid="family $(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | xargs) model $(grep -m1 '^model[[:space:]]' /proc/cpuinfo | cut -d: -f2 | xargs), $(grep -m1 '^cpu MHz' /proc/cpuinfo | cut -d: -f2 | xargs | cut -d. -f1) MHz"
  echo "- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) ($cpuid), $(nproc) cores visible, $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo), $(uname -sr)"
  echo "- Toolchain: $(rustc -V); Python peer: mcpeye 0.1.5 on $({ [ -x "$PEER_PY" ] && "$PEER_PY" -V 2>&1; } || echo 'the venv, made later in this run')"
  echo "- Load average $1: $(cut -d' ' -f1-3 /proc/loadavg)"
}

if [ -n "$PEER_ONLY" ]; then
  peer
  cat "$OUT"/peer/*.json 2>/dev/null || { log "no figures from the Python SDK"; exit 1; }
  exit 0
fi

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
harness cpu 300000 30000 10000 3
harness cpu_mimalloc 300000 30000 10000 3
harness rmcp 20000 2000 3
harness outbox 3 200
harness identities 5
log "scripts/compile_cost.sh 200 3"
scripts/compile_cost.sh 200 3 2> >(tee -a "$OUT/compile.log" >&2) | grep '^RESULT' >> "$RESULTS"

peer
machine "at end" | tail -1 >> "$OUT/machine.md"

cat "$OUT/machine.md"
echo
if command -v python3 >/dev/null 2>&1; then
  python3 scripts/bench_table.py "$RESULTS" "$TARGET/criterion" "$OUT/peer" > "$OUT/table.md"
  cat "$OUT/table.md"
else
  log "python3 is needed to print the table (scripts/bench_table.py); the raw figures follow"
  cat "$RESULTS"
fi
