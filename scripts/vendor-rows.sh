#!/usr/bin/env bash
# Vendors SWE-bench rows' repositories as test data: for every repository of ROWS.jsonl, a bare
# repository OUT/owner__name holding exactly the rows' base commits (depth 1, no other history),
# one branch per instance_id; `swerl tasks validate ROWS.jsonl --repos OUT` then runs them.
#
#   scripts/vendor-rows.sh ROWS.jsonl OUT [SOURCE]
#
# SOURCE: where full clones are, as SOURCE/owner+name/repo (a mirror folder) or
# SOURCE/owner__name; default: https://github.com/owner/name.
set -euo pipefail
rows=$1 out=$2 source=${3:-}
mkdir -p "$out"
python3 - "$rows" <<'PY' | while read -r repo id sha; do
import json, sys
for line in open(sys.argv[1]):
    if line.strip():
        r = json.loads(line)
        print(r['repo'], r['instance_id'], r['base_commit'])
PY
  name=${repo/\//__}
  url=https://github.com/$repo
  if [ -n "$source" ]; then
    for candidate in "$source/${repo/\//+}/repo" "$source/$name"; do
      [ -d "$candidate" ] && url=file://$(cd "$candidate" && pwd) && break
    done
  fi
  # No template: no sample hooks or description in test data.
  [ -d "$out/$name" ] || git init -q --bare --template= "$out/$name"
  # A commit by id: local sources serve it whatever refs point at it.
  git -C "$out/$name" fetch -q --depth 1 --upload-pack="git -c uploadpack.allowAnySHA1InWant=true upload-pack" "$url" "$sha:refs/heads/$id"
  echo "$name: $id at ${sha:0:8}"
done
for repo in "$out"/*/; do
  git -C "$repo" gc -q --aggressive --prune=now
  rm -f "$repo/FETCH_HEAD"
  # Empty folders a repository needs do not survive a commit of it without these.
  mkdir -p "$repo/refs/heads" "$repo/refs/tags"
  touch "$repo/refs/heads/.gitkeep" "$repo/refs/tags/.gitkeep"
  echo "$(du -sh "$repo" | cut -f1) $repo"
done
