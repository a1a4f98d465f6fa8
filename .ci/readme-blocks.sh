#!/usr/bin/env bash
# Runs the README's "First request" and "Transcribe something" shell blocks, taken from
# README.md itself (so the doc cannot drift from what works), pasted in order into one shell,
# against a server started with `npm start` on a fresh data dir, and checks what they print:
# /v1/me answers the account's email, the keyless and wrong-key calls answer as documented,
# the job ends done and its SRT is fetched. The only change to the blocks is the port
# (`127.0.0.1:8080` → a free one, `READMEBLOCKS_PORT`, default 18780).
set -euo pipefail
cd "$(dirname "$0")/.."

port=${READMEBLOCKS_PORT:-18780}
work=$(mktemp -d)
blocks="$work/blocks.sh"

# The first ```sh fence after a heading that starts with the given text.
block_after() {
  awk -v heading="$1" '
    index($0, heading) == 1 { found = 1; next }
    found && !inside && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
  ' README.md
}
{
  echo "set -euo pipefail"
  block_after "## First request"
  block_after "## Transcribe something"
} | sed "s/127\.0\.0\.1:8080/127.0.0.1:$port/g" >"$blocks"
for heading in "First request" "Transcribe something"; do
  if [[ -z "$(block_after "## $heading")" ]]; then echo "README.md has no sh block under \"## $heading\""; exit 1; fi
done

export VERBATIM_DATA_DIR="$work/data" VERBATIM_PORT=$port VERBATIM_RUNNER_PORT=$((port + 1))
# A shell that followed the quick start before may hold a key: the server must start anyway.
export VERBATIM_KEY=vb_from_an_earlier_paste
setsid npm start >"$work/server.log" 2>&1 &
server=$!
cleanup() {
  kill -TERM -- "-$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then echo "the server exited:"; cat "$work/server.log"; exit 1; fi
  sleep 1
done

echo "== README blocks (port $port)"
status=0
timeout 600 bash "$blocks" >"$work/out.txt" 2>&1 || status=$?
cat "$work/out.txt"
failed=0
expect() {
  if ! grep -qE -- "$2" "$work/out.txt"; then echo "README blocks: expected $1"; failed=1; fi
}
expect "/v1/me with the key to answer the account's email" '"email":"you@example.com","tier":"(free|paid)"'
expect "keyless /v1/me to answer a guest" '"tier":"guest"'
expect "a wrong key to answer INVALID_API_KEY" '"code":"INVALID_API_KEY"'
expect "the job to end done" '"job_id":"[0-9a-f-]{36}".*"status":"done"|"status":"done".*"job_id"'
expect "the SRT transcript" '^00:00:[0-9]{2},[0-9]{3} --> 00:00:[0-9]{2},[0-9]{3}'
if [[ $status -ne 0 || $failed -ne 0 ]]; then
  echo "README blocks failed (exit $status); server log:"; tail -n 40 "$work/server.log"; exit 1
fi
echo "README blocks: ok"
