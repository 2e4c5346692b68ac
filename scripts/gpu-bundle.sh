#!/usr/bin/env bash
# Packs what the Node stages of scripts/gpu-check.sh need on a GPU machine that has no Node and
# no package registry: this machine's Node binary, the production node_modules (no types, maps
# or docs) and the compiled TypeScript (dist/), each xz-compressed, into DIR (default .gpu, which
# git should ignore: `echo /.gpu/ >> .git/info/exclude`). About 27 MB; on the GPU machine,
# gpu-check.sh unpacks them when it finds no `node` (SWERL_GPU_BUNDLE names another DIR).
# The Node binary must be self-contained (the nodejs.org / NodeSource builds are; Debian's
# nodejs links libnode and is refused). The tap tests go compiled to JavaScript (dist-tests/)
# with tap's runtime closure (from package-lock.json, without its TypeScript loader: ts-node,
# swc and typescript alone are ~60 MB), about 1.8 MB more.
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
rm -rf dist-tests
npx tsc -p tsconfig.json --noEmit false --outDir dist-tests --declaration false --sourceMap false
node -e 'const lock = require("./package-lock.json").packages;
  const loader = new Set(["typescript", "ts-node", "@swc/core", "@tapjs/run", "@typescript/native-preview"]);
  const seen = new Set();
  const find = (from, name) => { // Node'"'"'s lookup: the nearest node_modules up from the package
    for (let dir = from; ; ) {
      const at = `${dir ? `${dir}/` : ""}node_modules/${name}`;
      if (lock[at]) return at;
      if (!dir) return undefined;
      const i = dir.lastIndexOf("/node_modules/");
      dir = i < 0 ? "" : dir.slice(0, i);
    }
  };
  const visit = (at) => {
    if (seen.has(at)) return;
    seen.add(at);
    const e = lock[at];
    for (const name of Object.keys({ ...e.dependencies, ...e.optionalDependencies, ...e.peerDependencies }))
      if (!loader.has(name)) { const next = find(at, name); if (next) visit(next); }
  };
  visit("node_modules/tap");
  console.log([...seen].sort().join("\n"));' >"$tmp/tap-closure.txt"
tar -cf - --exclude='*.d.ts' --exclude='*.map' --exclude='*.md' dist-tests -T "$tmp/tap-closure.txt" | xz -T0 -9 >"$dir/tests.tar.xz"
du -ch "$dir"/node.xz "$dir"/node_modules.tar.xz "$dir"/dist.tar.xz "$dir"/tests.tar.xz | tail -1 | sed "s|total|in $dir (node $(node --version))|"
