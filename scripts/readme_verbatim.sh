#!/usr/bin/env bash
# Follows README's Getting started, Serve it and Testing your server verbatim in a new crate
# outside the repository: the code blocks are copied out of README.md, not rewritten here, so a
# README that no longer builds or serves fails this script.
#
#   scripts/readme_verbatim.sh [WORK_DIR]      # default: a fresh temporary directory
#
# Needs cargo, python3 and curl, and crates.io (the new crate resolves its own dependencies).
# Events go to a throwaway loopback ingest on a free port instead of README's 3001, which other
# local servers may hold; the Streamable HTTP server listens on README's 127.0.0.1:8080.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work/blocks"
ln -sfn "$repo" "$work/mcpeye-rs"
cd "$work"

python3 - "$repo/README.md" "$work/blocks" <<'PY'
import re, sys
readme, out = open(sys.argv[1]).read(), sys.argv[2]
fences = [(m.start(), m.group(1), m.group(2)) for m in re.finditer(r"```([^\n]*)\n(.*?)```", readme, re.S)]
def first(after, lang):
    start = readme.index(after)
    return next(body for pos, tag, body in fences if pos > start and tag.startswith(lang))
blocks = {
    "gs_toml": first("## Getting started", "toml"),
    "gs_main": first("## Getting started", "rust"),
    "serve_toml": first("## Serve it", "toml"),
    "stdio_main": first("### Over stdio", "rust"),
    "stdio_try": first("Try it by piping", "sh"),
    "http_main": first("### Over Streamable HTTP", "rust"),
    "dev_toml": first("## Testing your server", "toml"),
    "test_mod": first("## Testing your server", "rust"),
}
blocks["http_try"] = first("`src/bin/http.rs`", "sh")
for name, body in blocks.items():
    open(f"{out}/{name}", "w").write(body)
PY

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 - "$port" > "$work/ingest.log" 2>&1 <<'PY' &
import http.server, sys
class Ingest(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        print(body.decode(), flush=True)
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
    def log_message(self, *args): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Ingest).serve_forever()
PY
ingest_pid=$!
trap 'kill $ingest_pid 2>/dev/null || true' EXIT
ingest_url="http://127.0.0.1:$port"

step() { printf '\n== %s\n' "$*"; }
events_with() { # waits up to 10 s for an event whose JSON holds every given string
    for _ in $(seq 50); do
        if python3 - "$work/ingest.log" "$@" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        payload = json.loads(line)
    except ValueError:
        continue
    for event in payload.get("events", []):
        text = json.dumps({**event, "client": payload.get("identity", {}).get("client")})
        if all(s in text for s in sys.argv[2:]):
            sys.exit(0)
sys.exit(1)
PY
        then return 0; fi
        sleep 0.2
    done
    echo "no event with: $*" >&2
    return 1
}

step "Getting started: cargo new, the dependencies, src/main.rs, cargo run"
rm -rf my-server
cargo new --quiet my-server
cd my-server
python3 - <<'PY'
toml = open("Cargo.toml").read().rstrip()
assert toml.endswith("[dependencies]"), "cargo new no longer ends Cargo.toml with [dependencies]"
open("Cargo.toml", "w").write(toml[: -len("[dependencies]")] + open("../blocks/gs_toml").read())
PY
cp ../blocks/gs_main src/main.rs
MCPEYE_INGEST_URL="$ingest_url" cargo run --quiet > ../gs.out
grep -q '"name":"search_products"' ../gs.out
grep -q 'red mug' ../gs.out
events_with '"toolName": "search_products"' 'The user wants a gift mug'

step "Serve it over stdio: the dependencies, src/main.rs, JSON-RPC lines piped in"
cat ../blocks/serve_toml >> Cargo.toml
cp ../blocks/stdio_main src/main.rs
mkdir -p src/bin
cp ../blocks/http_main src/bin/http.rs
cargo build --quiet
sed "s|http://127.0.0.1:3001|$ingest_url|" ../blocks/stdio_try > ../stdio_try.sh
bash ../stdio_try.sh > ../stdio.out
grep -q '"text":"Hello, Ada!"' ../stdio.out
events_with '"toolName": "greet"' '"client": "pipe/0.1"' 'The user wants to greet Ada before a meeting.'

step "Serve it over Streamable HTTP: curl, then SIGTERM"
sed "s|http://127.0.0.1:3001|$ingest_url|" ../blocks/http_try > ../http_try.sh
bash ../http_try.sh > ../http.out 2>&1
grep -q '"text":"Hello, Ada!"' ../http.out
events_with '"toolName": "greet"' '"client": "curl/8"' 'The user wants to greet Ada.'

step "Testing your server: the dev-dependency and the tests module, cargo test"
printf '\n' >> Cargo.toml
cat ../blocks/dev_toml >> Cargo.toml
printf '\n' >> src/main.rs
cat ../blocks/test_mod >> src/main.rs
cargo test --quiet --bin my-server 2>&1 | tee ../test.out | tail -3
grep -q 'test result: ok. 2 passed' ../test.out

step "README followed verbatim in $work/my-server: it builds, serves, records and tests"
