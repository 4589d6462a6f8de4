#!/usr/bin/env bash
# README's report picture (docs/report.png): the page of the scripted month of
# mcpeye-report/tests/findings_month.rs (one planted problem of each finding's kind), as headless
# Chromium shows it 860 pixels wide, its first 1000 pixels: the findings and the overview.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
MCPEYE_FINDINGS_MONTH="$dir/month.jsonl" cargo test -q -p mcpeye-report --test findings_month a_month_with >/dev/null
cargo run -q -p mcpeye-cli -- report "$dir/month.jsonl" --html "$dir/report.html" >/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --host-resolver-rules='MAP * ~NOTFOUND' --window-size=860,1000 \
  --screenshot="$dir/report.png" "file://$dir/report.html" 2>/dev/null
cp "$dir/report.png" docs/report.png
echo "docs/report.png: $(wc -c < docs/report.png) bytes"
