#!/usr/bin/env bash
# The PKU harness Cloud's tests against a real PostgreSQL (DESIGN.md §12): installs Debian's
# postgresql if it is missing, starts a throwaway cluster in a temporary directory on a loopback
# port (as the `postgres` user when run as root: initdb refuses root), runs the cloud server's
# tests (among them the core's cloud client end to end, cloud/tests/client.rs) with
# HARNESS_CLOUD_TEST_POSTGRES set, and stops it.
#   scripts/test-cloud-postgres.sh             # the tests
#   scripts/test-cloud-postgres.sh -- CMD ...  # any command with the database's URL exported
set -euo pipefail
cd "$(dirname "$0")/.."

pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}
if [ -z "$(pg_bin)" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi
BIN="$(pg_bin)"

DIR="$(mktemp -d /tmp/harness-cloud-pg.XXXXXX)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = 0 ]; then chown postgres "$DIR"; fi
stop() {
  as_pg "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap stop EXIT

as_pg "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust --no-sync -E UTF8 >"$DIR/initdb.log"
as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
  -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR -c fsync=on -c max_connections=200" \
  start >/dev/null
export HARNESS_CLOUD_TEST_POSTGRES="postgres://postgres@127.0.0.1:$PORT/postgres"
echo "test-cloud-postgres: PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT"

if [ "${1:-}" = "--" ]; then
  shift
  "$@"
else
  cargo test --locked -p harness-cloud
fi
