#!/usr/bin/env bash
# Compile cost of #[mcpeye::tool]: build time of a crate with N annotated tools, against
#   plain     — the same functions without the attribute (a lower bound: no schema, no dispatch);
#   manual    — the same functions with what a server needs without mcpeye: a
#               #[derive(Deserialize, JsonSchema)] argument struct per tool and a dispatcher.
# Dependencies are built once; each crate is then rebuilt alone (touch + cargo build), REPS
# times, and the median is printed as `RESULT compile.<crate>.<profile>_s <seconds>`.
#   scripts/compile_cost.sh [N_TOOLS] [REPS]
set -euo pipefail
N=${1:-200}
REPS=${2:-3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
DIR=${COMPILE_COST_DIR:-/tmp/mcpeye-compile-cost}
rm -rf "$DIR/annotated" "$DIR/plain" "$DIR/manual"
mkdir -p "$DIR"

cat > "$DIR/Cargo.toml" <<TOML
[workspace]
members = ["annotated", "plain", "manual"]
resolver = "2"
TOML
cp "$REPO/Cargo.lock" "$DIR/Cargo.lock"

for c in annotated plain manual; do
  mkdir -p "$DIR/$c/src"
  cat > "$DIR/$c/Cargo.toml" <<TOML
[package]
name = "cc-$c"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
mcpeye = { path = "$REPO" }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1.2"
TOML
done

{
  echo "//! $N tools annotated with #[mcpeye::tool]."
  for i in $(seq 1 "$N"); do
    cat <<RS
/// Tool number $i: look records up by free text.
#[mcpeye::tool(read_only)]
pub fn tool_$i(
    /// Words to look for.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
    /// Whether archived records count.
    archived: bool,
) -> Result<String, String> {
    Ok(format!("$i: {query} {limit:?} {archived}"))
}
RS
  done
} > "$DIR/annotated/src/lib.rs"

{
  echo "//! The same $N functions, without the attribute."
  for i in $(seq 1 "$N"); do
    cat <<RS
/// Tool number $i: look records up by free text.
pub fn tool_$i(query: String, limit: Option<u32>, archived: bool) -> Result<String, String> {
    Ok(format!("$i: {query} {limit:?} {archived}"))
}
RS
  done
} > "$DIR/plain/src/lib.rs"

{
  echo "//! The same $N functions, with hand-written argument structs, schemas and dispatch."
  echo "use serde_json::Value;"
  for i in $(seq 1 "$N"); do
    cat <<RS
/// Arguments of tool $i.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Tool${i}Args {
    /// Words to look for.
    pub query: String,
    /// At most this many results.
    pub limit: Option<u32>,
    /// Whether archived records count.
    pub archived: bool,
}
/// Tool number $i: look records up by free text.
pub fn tool_$i(query: String, limit: Option<u32>, archived: bool) -> Result<String, String> {
    Ok(format!("$i: {query} {limit:?} {archived}"))
}
RS
  done
  echo "/// Every tool's name and input schema."
  echo "pub fn schemas() -> Vec<(&'static str, schemars::Schema)> {"
  echo "    vec!["
  for i in $(seq 1 "$N"); do echo "        (\"tool_$i\", schemars::schema_for!(Tool${i}Args)),"; done
  echo "    ]"
  echo "}"
  echo "/// Calls a tool by name."
  echo "pub fn call(name: &str, args: Value) -> Result<String, String> {"
  echo "    match name {"
  for i in $(seq 1 "$N"); do
    echo "        \"tool_$i\" => { let a: Tool${i}Args = serde_json::from_value(args).map_err(|e| e.to_string())?; tool_$i(a.query, a.limit, a.archived) }"
  done
  echo "        _ => Err(format!(\"unknown tool {name}\")),"
  echo "    }"
  echo "}"
} > "$DIR/manual/src/lib.rs"

cd "$DIR"
export CARGO_TARGET_DIR="$DIR/target"
for profile in dev; do
  # Dependencies (and a first build of each crate), untimed.
  cargo build -q --profile "$profile" --workspace 2>/dev/null || cargo build --profile "$profile" --workspace
  for c in plain manual annotated; do
    times=()
    for _ in $(seq 1 "$REPS"); do
      touch "$c/src/lib.rs"
      s=$(date +%s.%N)
      cargo build -q --profile "$profile" -p "cc-$c"
      e=$(date +%s.%N)
      times+=("$(echo "$e - $s" | bc)")
    done
    med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    echo "compile $c ($N tools, $profile): ${times[*]} s, median $med s" >&2
    echo "RESULT compile.$c.${profile}_s $med"
  done
done
