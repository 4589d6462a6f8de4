#!/usr/bin/env bash
# How far one call goes: for each way in (`Manifest::call`, `ManifestServer` and `instrument`
# through rmcp's client, each with a tracker delivering to a loopback ingest), the functions of
# mcpeye's own crates that run at least once per call, and the source files they are in.
#
#   scripts/call_path.sh [N]    # N calls per run (default 200); needs valgrind
#
# Runs benches/call_path.rs, built in debug (nothing inlined away: each function of the source is
# one), under callgrind twice per way, with N and 2N calls; a function counts when it was called
# at least N more times in the second run (setup and per-batch work cancel out). "Ours" means
# defined in a file under src/, mcpeye-runtime/src/, mcpeye-macros/src/ or mcpeye-contract/src/
# (generic code of ours instantiated elsewhere included; the generated code of `#[mcpeye::tool]`
# lives in the user's file, the bench's here, and is not counted). A closure counts as a function
# of its own (a column says how many of the count are closures); a function's recursive entries
# (callgrind's `f'2`) count once. All threads: the flusher's work per event is part of a call's
# path. Each thread is also counted apart, to split the count between the calling side (the
# calling thread, and rmcp's runtime threads) and the flusher (the thread that encodes the
# events). Raw profiles stay in $CARGO_TARGET_DIR/call-path/.
# `--fair-sched=yes`: valgrind runs one thread at a time, and without its fair scheduler the
# calling thread can keep the flusher from running until the tracker's shutdown deadline.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
command -v valgrind >/dev/null || { echo "call_path: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
out="$target/call-path"
mkdir -p "$out"
exe=$(cargo build --quiet --bench call_path --message-format=json |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "call_path" and m.get("executable"):
        print(m["executable"])')
[ -n "$exe" ] || { echo "call_path: the bench was not built" >&2; exit 1; }
for way in call manifest_server instrument; do
  for n in "$N" "$((2 * N))"; do
    rm -f "$out/$way.$n.out"*
    valgrind --tool=callgrind --fair-sched=yes --separate-threads=yes --callgrind-out-file="$out/$way.$n.out" "$exe" "$way" "$n" >/dev/null 2>"$out/$way.$n.log" ||
      { cat "$out/$way.$n.log" >&2; exit 1; }
  done
done
python3 - "$PWD" "$out" "$N" <<'PY'
import collections, glob, os, re, sys
repo, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
OURS = [os.path.join(repo, d) + "/" for d in ("src", "mcpeye-runtime/src", "mcpeye-macros/src", "mcpeye-contract/src")]
FLUSHER = "mcpeye_runtime::flush::encode::encode"

def profile(path):
    """Calls per function and each function's file, from one thread's callgrind.out file."""
    names = {"fl": {}, "fn": {}}
    group = {"fl": "fl", "fi": "fl", "fe": "fl", "cfl": "fl", "cfi": "fl", "fn": "fn", "cfn": "fn"}
    calls, file_of = collections.Counter(), {}
    fl = fn = cfn = None
    for line in open(path, errors="replace"):
        m = re.match(r"(fl|fi|fe|cfl|cfi|fn|cfn)=(?:\((\d+)\))? ?(.*)", line.rstrip("\n"))
        if m:
            key, id_, name = m.groups()
            table = names[group[key]]
            if id_ is not None and name:
                table[id_] = name
            name = table.get(id_, name) if id_ is not None else name
            if key == "fl":
                fl = name
            elif key == "fn":
                fn = name
                file_of.setdefault(fn, fl)
            elif key == "cfn":
                cfn = name
            continue
        if line.startswith("calls="):
            calls[cfn] += int(line.split()[0][6:])
    # callgrind names a function's recursive entries `f'2`, `f'3`: one function all the same.
    merged, files = collections.Counter(), {}
    for f, c in calls.items():
        merged[re.sub(r"'\d+$", "", f)] += c
    for f, fl in file_of.items():
        files.setdefault(re.sub(r"'\d+$", "", f), fl)
    return merged, files

def run(way, k):
    """The calls of one run: the calling side's (every thread but the flusher), the flusher's."""
    calling, flusher, files = collections.Counter(), collections.Counter(), {}
    for path in glob.glob(f"{out}/{way}.{k}.out-*"):
        calls, file_of = profile(path)
        files.update(file_of)
        (flusher if any(f.startswith(FLUSHER) for f in calls) else calling).update(calls)
    if not flusher:
        sys.exit(f"call_path: no thread of {way}.{k} ran {FLUSHER}: the split needs the encoder's name")
    return calling, flusher, files

def per_call(few, many, files):
    ours = lambda f: any((files.get(f) or "").startswith(d) for d in OURS)
    return {f for f in many if many[f] - few[f] >= n and ours(f)}

print(f"| way in | functions per call | of them closures | files | calling side: functions, files | flusher: functions, files | ({n} and {2 * n} calls, debug build)")
print("|---|---|---|---|---|---|")
for way in ("call", "manifest_server", "instrument"):
    (c1, f1, _), (c2, f2, files) = run(way, n), run(way, 2 * n)
    few, many = c1 + f1, c2 + f2
    ours, calling, flusher = per_call(few, many, files), per_call(c1, c2, files), per_call(f1, f2, files)
    in_files = lambda fs: len({files[f] for f in fs})
    closures = sum("{{closure}}" in f for f in ours)
    print(f"| {way} | {len(ours)} | {closures} | {in_files(ours)} | {len(calling)}, {in_files(calling)} | {len(flusher)}, {in_files(flusher)} |")
    with open(f"{out}/{way}.functions", "w") as listing:
        for f in sorted(ours, key=lambda f: (files[f], f)):
            side = ("C" if f in calling else "-") + ("F" if f in flusher else "-")
            listing.write(f"{many[f] - few[f]:>8}  {side}  {os.path.relpath(files[f], repo)}  {f}\n")
print(f"(the functions, with their extra calls, C: on the calling side, F: on the flusher, and files: {out}/WAY.functions)")
PY
