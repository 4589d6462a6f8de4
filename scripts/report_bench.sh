#!/usr/bin/env bash
# `mcpeye report` at scale, side by side with DuckDB on the same files (issue 44 item 8).
#
#   scripts/report_bench.sh                 # 1 M and 10 M calls, templated and free-text intents
#   scripts/report_bench.sh 1000000         # the sizes given
#
# For each size and kind of intents: scripts/gen_event_log.py writes a month of logs (three
# replicas' rotated files and one payload file) into a temporary directory; `mcpeye report DIR
# --json` (a release build of mcpeye-cli) and DuckDB (scripts/report_bench.py, `read_ndjson` of
# the same files) each run under `/usr/bin/time -v` for wall time and peak RSS; their figures are
# compared (calls, errors and p50/p95/p99 per tool, distinct conversations, 2-tool sequences);
# a table is printed at the end.
#
# Environment: MCPEYE_BIN (default: target/release/mcpeye, built here), KINDS ("templated
# free"), REPORT_TIMEOUT (seconds, default 600: a report still running then is recorded as not
# finished), SEED (44), BENCH_DIR (default: a new temporary directory, removed at the end unless
# KEEP=1). DuckDB comes from PyPI into a venv under target/ (only this script uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000)
kinds=(${KINDS:-templated free})
timeout_s="${REPORT_TIMEOUT:-600}"
seed="${SEED:-44}"

if [ ! -x /usr/bin/time ]; then
    sudo apt-get install -y time >/dev/null || apt-get install -y time >/dev/null
fi
venv="$CARGO_TARGET_DIR/bench-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import duckdb' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q duckdb
fi
bin="${MCPEYE_BIN:-}"
if [ -z "$bin" ]; then
    cargo build -q --release -p mcpeye-cli
    bin="$CARGO_TARGET_DIR/release/mcpeye"
fi

work="${BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$work"
[ "${KEEP:-0}" = 1 ] || [ -n "${BENCH_DIR:-}" ] || trap 'rm -rf "$work"' EXIT

# `/usr/bin/time -v`'s wall time (s) and peak RSS (MiB) from its output file.
measured() {
    awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
                /Maximum resident set size/ { m = $2 / 1024 }
                END { printf "%.1f s, %.0f MiB", s, m }' "$1"
}

rows=()
duckdb_version=$("$venv/bin/python" -c 'import duckdb; print(duckdb.__version__)')
for n in "${sizes[@]}"; do
    for kind in "${kinds[@]}"; do
        dir="$work/log-$n-$kind"
        if [ ! -d "$dir" ]; then
            python3 scripts/gen_event_log.py --calls "$n" --intents "$kind" --seed "$seed" --out "$dir"
        fi
        size=$(du -sm "$dir" | cut -f1)
        files=$(ls "$dir" | wc -l)
        echo "== $n calls, $kind intents: $files files, $size MiB" >&2

        status=0
        /usr/bin/time -v -o "$work/report.time" timeout "$timeout_s" \
            "$bin" report "$dir" --json >"$work/report.json" 2>"$work/report.err" || status=$?
        if [ "$status" = 124 ]; then
            report="did not finish in $timeout_s s ($(measured "$work/report.time" | sed 's/.*, //') when stopped)"
        elif [ "$status" != 0 ]; then
            report="failed ($status): $(tail -1 "$work/report.err")"
        else
            report=$(measured "$work/report.time")
        fi
        /usr/bin/time -v -o "$work/duck.time" "$venv/bin/python" scripts/report_bench.py duckdb "$dir" "$work/duck.json"
        duck=$(measured "$work/duck.time")
        if [ "$status" = 0 ]; then
            check=$(python3 scripts/report_bench.py compare "$work/report.json" "$work/duck.json" 2>&1 | tail -5 | paste -sd ';') || true
        else
            check="—"
        fi
        echo "   report: $report; duckdb: $duck; $check" >&2
        rows+=("| $n calls, $kind intents ($files files, $size MiB) | $report | $duck | $check |")
    done
done

echo
echo "$(nproc) cores; $("$bin" --version 2>/dev/null || echo mcpeye); DuckDB $duckdb_version; seed $seed"
echo
echo "| input | \`mcpeye report --json\` (wall, peak RSS) | DuckDB (wall, peak RSS) | cross-check |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
