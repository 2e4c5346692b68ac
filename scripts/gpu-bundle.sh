#!/usr/bin/env bash
# Packs what the Node stages of scripts/gpu-check.sh need on a GPU machine that has no Node and
# no package registry: this machine's Node binary, the production node_modules (no types, maps
# or docs) and the compiled TypeScript (dist/), each xz-compressed, into DIR (default .gpu, which
# git should ignore: `echo /.gpu/ >> .git/info/exclude`). About 26 MB; on the GPU machine,
# gpu-check.sh unpacks them when it finds no `node` (SWERL_GPU_BUNDLE names another DIR).
# The Node binary must be self-contained (the nodejs.org / NodeSource builds are; Debian's
# nodejs links libnode and is refused). The tap tests stay out (dev dependencies, ~250 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.gpu}
node_bin=$(readlink -f "$(command -v node)")
if ldd "$node_bin" | grep -q libnode; then
  echo "gpu-bundle: $node_bin links libnode.so; install a self-contained Node 20 (nodejs.org or NodeSource) first" >&2
  exit 1
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npx tsc -p tsconfig.build.json
xz -T0 -6 -c "$node_bin" >"$dir/node.xz"
cp package.json package-lock.json "$tmp/"
(cd "$tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
tar -C "$tmp" -cf - --exclude='node_modules/@types' --exclude='*.d.ts' --exclude='*.map' --exclude='*.md' node_modules |
  xz -T0 -9 >"$dir/node_modules.tar.xz"
tar -cf - dist | xz -T0 -9 >"$dir/dist.tar.xz"
du -ch "$dir"/node.xz "$dir"/node_modules.tar.xz "$dir"/dist.tar.xz | tail -1 | sed "s|total|in $dir (node $(node --version))|"
