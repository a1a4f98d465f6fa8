#!/usr/bin/env bash
# Caches the real pipeline's transcripts of the quality set (test/quality/transcripts/*.json):
# the project's CLI with its default model, language en, diarization and word times, exactly
# as a user would run it. The text-level tests and bench/quality.ts read these; rerun after a
# change to the recordings or to the ASR/diarization pipeline:
#   bash test/quality/transcribe.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
media="$here/../../../shared/media"
mkdir -p "$here/transcripts"
for annotation in "$here"/q0*.json; do
  name="$(basename "$annotation" .json)"
  input="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("file") or "")' "$annotation")"
  if [ -n "$input" ]; then input="$here/$input"; else
    input="$media/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["media"])' "$annotation")"; fi
  echo "$name <- $input" >&2
  (cd "$here/../.." && npx node --experimental-strip-types --disable-warning=ExperimentalWarning src/main.ts \
    transcribe "$input" --language en --diarize --words --format json --out "$here/transcripts/$name.json")
done
