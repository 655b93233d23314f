#!/usr/bin/env bash
# The person's browser in an MCP conformance run: opens the authorization page and follows the
# authorization server's redirects back to the CLI's callback, as a person who signs in does.
exec curl -s -o /dev/null -L --max-redirs 10 "$1"
