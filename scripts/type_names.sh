#!/usr/bin/env bash
# Type names declared more than once in mcpeye-runtime/src (structs, enums, unions, traits and
# top-level type aliases; associated types of impls and traits are left out): each name is to say
# what it holds, once. Prints the duplicates with where they are, and exits 1 if there are any.
#
#   scripts/type_names.sh
set -euo pipefail
cd "$(dirname "$0")/.."
decl='^[[:space:]]*(pub(\([a-z:]+\))? )?(struct|enum|union|trait|type) [A-Z][A-Za-z0-9_]*'
found=$(grep -rnE "$decl" mcpeye-runtime/src --include='*.rs' |
  grep -vE '^[^:]+:[0-9]+:[[:space:]]+(pub(\([a-z:]+\))? )?type ' |
  sed -E 's/^([^:]+):([0-9]+):[[:space:]]*(pub(\([a-z:]+\))? )?(struct|enum|union|trait|type) ([A-Za-z0-9_]+).*/\6 \1:\2/' |
  sort)
dups=$(awk '{print $1}' <<<"$found" | uniq -d)
[ -z "$dups" ] && exit 0
echo "type names declared more than once in mcpeye-runtime/src:" >&2
grep -wFf <(echo "$dups") <<<"$found" >&2
exit 1
