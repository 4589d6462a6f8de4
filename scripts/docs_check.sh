#!/usr/bin/env bash
# What a user of `mcpeye` reads on docs.rs stays in their terms. Builds the facade's docs with
# every feature (as docs.rs does, warnings denied) and fails when a rendered page:
#
# - names `mcpeye_runtime` or a hidden `__private` path: the runtime's items are rendered on the
#   facade's pages, so their docs must say `mcpeye::`, which their doctests compile against the
#   facade (a dev-dependency of mcpeye-runtime and mcpeye-macros);
# - has an item, method, field or variant without docs;
# - has an item whose own docs carry no example, unless it is a constant or listed below (values
#   a user only reads, shown by the example of the item that returns them);
# - has a method (inherent, or of a trait: required or provided) without an example in its own
#   docs; methods of trait implementations are the trait's, associated constants are exempt;
# - has an example marked `ignore` (README's two servers aside).
#
#   scripts/docs_check.sh
#
# The examples themselves are compiled and run by `cargo test --doc`.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
RUSTDOCFLAGS="-D warnings" cargo doc -p mcpeye --all-features --no-deps --quiet
python3 - "$target/doc/mcpeye" <<'EOF'
import html, os, re, sys

root = sys.argv[1]
# Item pages whose own docs need no example: the rows of reports, read from the report (whose
# module docs show one being made).
NO_EXAMPLE = {
    "report/struct." + name + ".html"
    for name in """CapabilityCount CapabilityRequest Conversation FailedIntent IntentCount ModelActivity
        ToolActivity ToolTokens UnknownTool""".split()
}

def text(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))

problems, pages, blocks, with_example, methods_with_example = [], 0, 0, 0, 0
for directory, _, files in os.walk(root):
    for name in files:
        if not name.endswith(".html") or name == "all.html":
            continue
        path = os.path.join(directory, name)
        rel = os.path.relpath(path, root)
        page = open(path, encoding="utf-8").read()
        if 'http-equiv="refresh"' in page:
            continue  # a redirect (`macro.tools!.html`)
        pages += 1
        # rustdoc's own scripts name the defining crate (trait implementors); users never see them.
        shown = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)
        shown_text = text(shown)
        for word in ("mcpeye_runtime", "__private"):
            at = shown_text.find(word)
            if at >= 0:
                context = " ".join(shown_text[max(0, at - 60) : at + 60].split())
                problems.append(f"{rel}: names `{word}`: …{context}…")
            elif word in shown:
                problems.append(f"{rel}: links to `{word}`")
        blocks += page.count('class="rust rust-example-rendered"')
        # Only README's two servers are not doctests (their transports would be dev-dependencies
        # of the quickstart's build); tests/readme_servers.rs builds them verbatim instead.
        ignored = page.count('class="example-wrap ignore"')
        if ignored > (2 if rel == "index.html" else 0):
            problems.append(f"{rel}: {ignored} example(s) marked `ignore`: make them doctests (`no_run` if they serve)")
        top = re.search(r'<details class="toggle top-doc"[^>]*>(.*?)</details>', page, re.S)
        if top is None or 'class="docblock' not in top.group(1):
            problems.append(f"{rel}: the item has no docs")
        elif "rust-example-rendered" in top.group(1):
            with_example += 1
        elif not name.startswith("constant.") and rel not in NO_EXAMPLE:
            problems.append(f"{rel}: the item's docs have no example")
        # Members: each `<section id="method.x">` (or field, variant…) is followed by its docblock.
        # Trait implementations are left out: their methods are documented (with examples) by the
        # trait.
        own = re.split(r'<h2 id="(?:trait-implementations|synthetic-implementations|blanket-implementations|foreign-impls|implementors)"', page)[0]
        for m in re.finditer(r'<section id="((?:method|tymethod|variant|structfield|associatedconstant)\.[^"]+)"', own):
            rest = own[m.end() :]
            nxt = re.search(r'<section id="|<h2 ', rest)
            chunk = rest[: nxt.start()] if nxt else rest
            if 'class="docblock' not in chunk:
                problems.append(f"{rel}#{m.group(1)}: no docs")
            elif m.group(1).startswith(("method.", "tymethod.")):
                if "rust-example-rendered" in chunk:
                    methods_with_example += 1
                else:
                    problems.append(f"{rel}#{m.group(1)}: the method's docs have no example")
        for m in re.finditer(r'<span id="((?:variant|structfield)\.[^"]+)"', own):
            rest = own[m.end() :]
            nxt = re.search(r'<span id="(?:variant|structfield)\.|<section id="|<h2 ', rest)
            chunk = rest[: nxt.start()] if nxt else rest
            if 'class="docblock' not in chunk:
                problems.append(f"{rel}#{m.group(1)}: no docs")

for p in sorted(set(problems)):
    print("error:", p, file=sys.stderr)
print(
    f"docs of mcpeye: {pages} pages, {blocks} code blocks, {with_example} items and {methods_with_example} methods"
    " with an example in their own docs"
)
sys.exit(1 if problems else 0)
EOF
