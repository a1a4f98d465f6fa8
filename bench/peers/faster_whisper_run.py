"""faster-whisper as a user runs it, one transcription per process (bench/asr.ts measures the process).

    python faster_whisper_run.py MODEL_DIR AUDIO MODE THREADS OUT

MODE: batched (BatchedInferencePipeline, batch 8, greedy; VAD is on in that pipeline),
      sequential (greedy, vad_filter=True), beam5 (default beam 5, vad_filter=True).
Everything else is faster-whisper's default (language detection, temperature fallback,
condition_on_previous_text for the sequential modes). Writes the joined segment text to OUT.

With PROFILE=1 in the environment it also prints, on stderr, the wall and CPU seconds spent in
CTranslate2's encoder and in its decoding (`generate`, cross-attention included) and language
detection, beside the whole transcription: the same split as our `--profile`.
"""
import os
import sys
import time

from faster_whisper import BatchedInferencePipeline, WhisperModel

model_dir, audio, mode, threads, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=threads)
stages = {}


def timed(fn, stage):
    def run(*args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            s = stages.setdefault(stage, [0.0, 0.0, 0])
            s[0] += time.perf_counter() - wall
            s[1] += time.process_time() - cpu
            s[2] += 1
    return run


class TimedCt2:
    """CTranslate2's Whisper object is a C++ type whose methods cannot be replaced: proxy it."""

    def __init__(self, inner):
        self._inner = inner
        self.generate = timed(inner.generate, "decoder (generate)")
        self.detect_language = timed(inner.detect_language, "language detection")

    def __getattr__(self, name):
        return getattr(self._inner, name)


profile = os.environ.get("PROFILE") == "1"
if profile:
    model.encode = timed(model.encode, "encoder")
    model.model = TimedCt2(model.model)
started_wall, started_cpu = time.perf_counter(), time.process_time()
if mode == "batched":
    segments, _ = BatchedInferencePipeline(model).transcribe(audio, batch_size=8, beam_size=1)
elif mode == "sequential":
    segments, _ = model.transcribe(audio, beam_size=1, vad_filter=True)
elif mode == "beam5":
    segments, _ = model.transcribe(audio, beam_size=5, vad_filter=True)
else:
    raise SystemExit(f"unknown mode {mode}")
text = " ".join(s.text.strip() for s in segments)
if profile:
    wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
    print(f"faster-whisper {mode}: transcription {wall:.1f} s wall, {cpu:.1f} CPU s (model load excluded)", file=sys.stderr)
    print("| stage | wall s | CPU s | calls |\n|---|---:|---:|---:|", file=sys.stderr)
    for name, (w, c, n) in stages.items():
        print(f"| {name} | {w:.2f} | {c:.2f} | {n} |", file=sys.stderr)
    print(f"| the rest (decode, VAD, log-mel, glue) | {wall - sum(v[0] for v in stages.values()):.2f} | | |", file=sys.stderr)
with open(out, "w", encoding="utf-8") as f:
    f.write(text)
