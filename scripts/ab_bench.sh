#!/usr/bin/env bash
# Times a change: the total-CPU and rmcp benches of an earlier commit and of HEAD, run
# alternately in one session, so that both builds see the same machine (this VM's speed moves
# by 2-3x between sessions and within one; figures from different sessions do not compare).
#   scripts/ab_bench.sh <base-commit> [runs]    # runs: pairs of runs per bench (default 3)
#   AB_BENCHES="cpu rmcp" scripts/ab_bench.sh 4656ce0
# Each run is the bench's full `--bench` size (cpu: 3 rounds of 300 000 calls back to back and
# 30 000 paced, then 3 paced rounds interleaved with untracked calls, each followed by the naive
# and floor pipelines'; rmcp: 3 rounds of 20 000 calls per server in blocks, then 3 rounds of the
# servers interleaved, each followed by the forward and floor routes'), so 3 runs give 9 rounds
# per build. The `interleaved` rows resolve a few hundred ns (each call or burst paired with an
# untracked or plain one); a base older than cb469d0 has no rmcp ones, older than the seventh
# pass no paced ones, older than the eighth no floor ones.
# Remove the base's worktree afterwards: git worktree remove --force target/ab-base-src
# Prints min, median and max per figure and build; raw logs stay in target/ab-run/.
# Builds the base in a worktree under target/ (its own target directory, seeded from this one).
# Not part of CI: timings need a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:?usage: scripts/ab_bench.sh <base-commit> [runs]}
RUNS=${2:-3}
BENCHES=${AB_BENCHES:-cpu cpu_mimalloc rmcp}
TARGET=$(realpath -m "${CARGO_TARGET_DIR:-target}")
OUT=$TARGET/ab-run
WT=$TARGET/ab-base-src
BASE_TARGET=$TARGET/ab-base-target
rm -rf "$OUT"
mkdir -p "$OUT/base" "$OUT/head"
log() { echo "== $*" >&2; }

# Copies the bench executables cargo just built (named in its JSON messages) into $1.
build_into() {
  local dest=$1
  shift
  local args=()
  for b in $BENCHES; do args+=(--bench "$b"); done
  cargo bench --no-run --message-format=json "${args[@]}" "$@" 2>/dev/null |
    python3 -c '
import json, shutil, sys
dest = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in m["target"]["kind"]:
        name = m["target"]["name"]
        shutil.copy(m["executable"], dest + "/" + name)
' "$dest"
}

log "building HEAD ($(git rev-parse --short HEAD))"
build_into "$OUT/head"
log "building $BASE in $WT"
if [ ! -d "$WT" ]; then
  # A worktree deleted with target/ (cargo clean) is still registered until pruned.
  git worktree prune
  git worktree add --detach "$WT" "$BASE" >/dev/null 2>&1
else
  git -C "$WT" checkout --quiet --force --detach "$BASE"
fi
if [ ! -d "$BASE_TARGET/release" ] && [ -d "$TARGET/release" ]; then
  mkdir -p "$BASE_TARGET" && cp -a "$TARGET/release" "$BASE_TARGET/"
fi
# A bench newer than the base (backlog.rs) runs there from HEAD's copy, with HEAD's benches/common/,
# when the public API it calls is the base's too: the base's tree is restored first.
git -C "$WT" reset --quiet --hard && git -C "$WT" clean --quiet -fd benches
for b in $BENCHES; do
  if [ ! -f "$WT/benches/$b.rs" ]; then
    log "$b: not in $BASE, HEAD's copy built there"
    cp "benches/$b.rs" "$WT/benches/"
    cp benches/common/*.rs "$WT/benches/common/"
    printf '\n[[bench]]\nname = "%s"\nharness = false\n' "$b" >> "$WT/Cargo.toml"
  fi
done
(cd "$WT" && export CARGO_TARGET_DIR=$BASE_TARGET && build_into "$OUT/base")
for b in $BENCHES; do
  for side in base head; do
    [ -x "$OUT/$side/$b" ] || { echo "no $b bench built for $side" >&2; exit 1; }
  done
done

for i in $(seq "$RUNS"); do
  for side in base head; do
    for b in $BENCHES; do
      log "run $i/$RUNS: $b, $side (load $(cut -d' ' -f1 /proc/loadavg))"
      echo "=== $b $side $i" >> "$OUT/log.txt"
      "$OUT/$side/$b" --bench >> "$OUT/log.txt" 2>&1
    done
  done
done

python3 - "$OUT/log.txt" "$BASE" "$(git rev-parse --short HEAD)" <<'EOF'
import re, statistics, sys
log, base, head = sys.argv[1:]
figures = {}
side = None
for line in open(log):
    m = re.match(r"=== (\S+) (base|head) \d+", line)
    if m:
        side = m.group(2)
        continue
    m = re.match(r"(cpu\S*) (back_to_back|paced)\s+no tracker\s+(\d+) ns/call \| tracker\s+\d+ ns/call "
                 r"\(calling thread\s+(\d+), other threads\s+(\d+)\) \| added\s+(-?\d+)", line)
    if m:
        bench, mode, bare, calling, other, added = m.groups()
        key = f"{bench} {mode}"
        figures.setdefault((key, "total CPU added per call"), {}).setdefault(side, []).append(int(added))
        figures.setdefault((key, "flusher's threads per event"), {}).setdefault(side, []).append(int(other))
        figures.setdefault((key, "calling thread added"), {}).setdefault(side, []).append(int(calling) - int(bare))
        continue
    m = re.match(r"round \d+ interleaved: instrument \+(-?\d+) ns latency, \+(-?\d+) ns thread CPU; "
                 r"manifest_server \+(-?\d+) ns latency, \+(-?\d+) ns thread CPU; flushers (\d+)", line)
    if m:
        il, ic, ml, mc, fl = map(int, m.groups())
        for server, lat, cpu in (("instrument", il, ic), ("manifest_server", ml, mc)):
            figures.setdefault((f"rmcp interleaved {server}", "added latency"), {}).setdefault(side, []).append(lat)
            figures.setdefault((f"rmcp interleaved {server}", "added CPU"), {}).setdefault(side, []).append(cpu + fl)
        continue
    m = re.match(r"round \d+ interleaved: forward \+(-?\d+) ns latency, \+(-?\d+) ns thread CPU; "
                 r"floor \+(-?\d+) ns latency, \+(-?\d+) ns thread CPU; flushers (\d+)", line)
    if m:
        wl, wc, fll, flc, fl = map(int, m.groups())
        for server, lat, cpu in (("forward", wl, wc), ("floor", fll, flc + fl)):
            figures.setdefault((f"rmcp interleaved {server}", "added latency"), {}).setdefault(side, []).append(lat)
            figures.setdefault((f"rmcp interleaved {server}", "added CPU"), {}).setdefault(side, []).append(cpu)
        continue
    m = re.match(r"round \d+ paced (interleaved|floor|naive): added (-?\d+) ns/call \(calling thread \+(-?\d+) ns, flusher (\d+)", line)
    if m:
        what = m.group(1)
        added, calling, fl = map(int, m.groups()[1:])
        figures.setdefault((f"cpu paced {what}", "total CPU added per call"), {}).setdefault(side, []).append(added)
        figures.setdefault((f"cpu paced {what}", "calling thread added"), {}).setdefault(side, []).append(calling)
        figures.setdefault((f"cpu paced {what}", "flusher per event"), {}).setdefault(side, []).append(fl)
        continue
    m = re.match(r"backlog (\S+)\s+no tracker\s+[\d.]+ us/call \| tracker\s+[\d.]+ us/call \| added\s+(-?[\d.]+) us/call"
                 r" \| involuntary switches added (-?\d+)", line)
    if m:
        mode, added, switches = m.groups()
        figures.setdefault((f"backlog {mode}", "whole process CPU added per call"), {}).setdefault(side, []).append(round(float(added) * 1000))
        figures.setdefault((f"backlog {mode}", "involuntary switches (thousands)"), {}).setdefault(side, []).append(int(switches))
        continue
    m = re.match(r"round \d+ (\S+)\s+median\s+(\d+) ns\s+cpu\s+(\d+)", line)
    if m:
        figures.setdefault(("rmcp " + m.group(1), "latency"), {}).setdefault(side, []).append(int(m.group(2)))
        figures.setdefault(("rmcp " + m.group(1), "cpu"), {}).setdefault(side, []).append(int(m.group(3)))
# rmcp: added over plain, round by round (each round runs plain first, then the others).
for (key, what) in list(figures):
    if key.startswith("rmcp ") and key != "rmcp plain" and not key.startswith("rmcp interleaved"):
        for s, v in figures[(key, what)].items():
            plain = figures[("rmcp plain", what)][s]
            figures.setdefault((key, f"added {what}"), {})[s] = [x - p for x, p in zip(v, plain)]
fmt = lambda v: f"{min(v)/1000:.2f}–{max(v)/1000:.2f} (median {statistics.median(v)/1000:.2f})" if v else "-"
def ratio(b, h):
    if not b or not h or statistics.median(b) <= 0:
        return "-"
    return f"{100 * statistics.median(h) / statistics.median(b):.0f} %"
print(f"| µs | {base} | HEAD {head} | HEAD / base (medians) |")
print("|---|---|---|---|")
for (key, what), sides in sorted(figures.items()):
    b, h = sides.get('base', []), sides.get('head', [])
    print(f"| {key}: {what} | {fmt(b)} | {fmt(h)} | {ratio(b, h)} |")
EOF
