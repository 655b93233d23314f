#!/usr/bin/env bash
# The client the official MCP conformance suite drives (`conformance client --command`): the
# harness CLI as a student runs it, in a data directory of its own — `harness mcp add` (signing
# in through $BROWSER: scripts/lib/mcp-conformance-browser.sh follows the authorization page's
# redirects as a person who signs in does) and `harness call`. The suite appends the server's
# URL, names the scenario in MCP_CONFORMANCE_SCENARIO and gives a pre-registered client in
# MCP_CONFORMANCE_CONTEXT. HARNESS_BIN is the harness binary.
set -euo pipefail
url=${!#}
here=$(cd "$(dirname "$0")" && pwd)
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
export BROWSER="$here/mcp-conformance-browser.sh"
# The app's client ID metadata document, as a plugin author publishes one for the CLI (the
# suite's authorization servers take any https address as read).
export HARNESS_OAUTH_CLIENT_METADATA=https://conformance-test.local/client-metadata.json
harness() { "$HARNESS_BIN" --data-dir "$data" "$@"; }
context() {
    node -e 'const c = JSON.parse(process.argv[1] || "{}"); process.stdout.write(String(c[process.argv[2]] ?? ""))' \
        "${MCP_CONFORMANCE_CONTEXT:-}" "$1"
}
# The calls the scenario asks for (its context's toolCalls), a line each: the tool, a tab, the
# input as JSON.
asked_calls() {
    node -e 'const c = JSON.parse(process.argv[1] || "{}");
        for (const t of c.toolCalls ?? []) console.log(`${t.name}\t${JSON.stringify(t.arguments ?? {})}`)' \
        "${MCP_CONFORMANCE_CONTEXT:-}"
}
# The tools installed from the server, as `harness tools` lists them.
tools() { harness tools | grep -o 'mcp-conf\.[A-Za-z0-9_-]*' | awk '!seen[$0]++'; }
call() { harness call "$1" "$2" --elicitation accept; }

add=(mcp add "$url" --name conf)
client_id=$(context client_id)
if [ -n "$client_id" ]; then
    add+=(--client-id "$client_id")
    HARNESS_OAUTH_CLIENT_SECRET=$(context client_secret)
    export HARNESS_OAUTH_CLIENT_SECRET
fi
# A private key (private_key_jwt) is handed over as a file, as an authorization server's
# console gives one.
if [ -n "$(context private_key_pem)" ]; then
    context private_key_pem >"$data/client-key.pem"
    add+=(--client-key-file "$data/client-key.pem")
fi
# Cross-app access: the enterprise identity provider and the ID token it issued.
if [ -n "$(context idp_issuer)" ]; then
    add+=(--idp-issuer "$(context idp_issuer)" --idp-client-id "$(context idp_client_id)")
    HARNESS_OAUTH_ID_TOKEN=$(context idp_id_token)
    export HARNESS_OAUTH_ID_TOKEN
fi
harness "${add[@]}"
first=$(tools | head -1)
asked=$(asked_calls)
if [ -n "$asked" ]; then
    while IFS=$'\t' read -r tool input; do
        call "mcp-conf.$tool" "$input" || true
    done <<<"$asked"
    exit 0
fi
case "${MCP_CONFORMANCE_SCENARIO:-}" in
    # The listing is the scenario.
    json-schema-ref-no-deref | request-metadata) ;;
    initialize | tools_call) [ -z "$first" ] || call "$first" '{"a": 2, "b": 3}' ;;
    # The one well-formed tool, with an input its schema takes (the others must be left out).
    http-invalid-tool-headers) call mcp-conf.valid_tool '{"region": "us-west1"}' ;;
    # The schema a model is shown, echoed back by the model (scripts/lib/mcp-conformance-model.mjs)
    # in a chat turn.
    json-schema-2020-12-preservation)
        coproc model { exec node "$here/mcp-conformance-model.mjs" json_schema_2020_12_tool json_schema_echo; }
        read -r port <&"${model[0]}"
        harness consent accept-terms
        HARNESS_API_KEY=conformance harness chat --endpoint "http://127.0.0.1:$port/v1" --model m \
            --answer allow --message "Echo the schema of json_schema_2020_12_tool." || true
        kill "$model_PID"
        ;;
    # Every tool once, in the order listed.
    *) for tool in $(tools); do call "$tool" '{}' || true; done ;;
esac
