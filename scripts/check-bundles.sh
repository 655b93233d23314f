#!/usr/bin/env bash
# The TypeScript plugins (DESIGN.md §11): installs the SDK's pinned npm packages
# (sdk/package-lock.json) into sdk/node_modules when they are missing or stale, type-checks the
# SDK and every plugin (tsc), then rebuilds each bundle (and sdk/runtime.js, the SDK and zod the
# bundles import) in memory with esbuild, and each shipped plugin's manifest.json (the JSON its
# bundle's manifest gives, which the core reads at open instead of running the bundle), and fails,
# naming the file, when one differs from the file committed beside its source. The Rust crates
# build from the committed files and need no Node. `--write` rebuilds and writes them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/host-tools.sh

require_command node "install Node.js 20 or later (the SDK is built with esbuild from npm)"
require_command npm "install Node.js and npm"

# npm ci is exact to the lock file; it runs again only when the lock file changed.
installed=sdk/node_modules/.installed-package-lock.json
if ! cmp -s sdk/package-lock.json "$installed"; then
  echo "installing the SDK's npm packages (sdk/package-lock.json)"
  (cd sdk && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp sdk/package-lock.json "$installed"
fi

echo "type-checking the SDK and the plugins"
sdk/node_modules/.bin/tsc -p sdk/tsconfig.json
if [ "${1:-}" = --write ]; then
  node sdk/build.mjs
else
  echo "checking the committed bundles and manifests against their TypeScript"
  node sdk/build.mjs --check
  echo "the bundles and manifests are fresh"
fi
