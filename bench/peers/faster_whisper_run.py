"""faster-whisper as a user runs it, one transcription per process (bench/asr.ts measures the process).

    python faster_whisper_run.py MODEL_DIR AUDIO MODE THREADS OUT

MODE: batched (BatchedInferencePipeline, batch 8, greedy; VAD is on in that pipeline),
      sequential (greedy, vad_filter=True), beam5 (default beam 5, vad_filter=True).
Everything else is faster-whisper's default (language detection, temperature fallback,
condition_on_previous_text for the sequential modes). Writes the joined segment text to OUT.
"""
import sys

from faster_whisper import BatchedInferencePipeline, WhisperModel

model_dir, audio, mode, threads, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=threads)
if mode == "batched":
    segments, _ = BatchedInferencePipeline(model).transcribe(audio, batch_size=8, beam_size=1)
elif mode == "sequential":
    segments, _ = model.transcribe(audio, beam_size=1, vad_filter=True)
elif mode == "beam5":
    segments, _ = model.transcribe(audio, beam_size=5, vad_filter=True)
else:
    raise SystemExit(f"unknown mode {mode}")
text = " ".join(s.text.strip() for s in segments)
with open(out, "w", encoding="utf-8") as f:
    f.write(text)
