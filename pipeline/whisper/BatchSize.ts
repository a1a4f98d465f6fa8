/**
 * Whisper windows decoded together unless the caller says otherwise; `VERBATIM_BATCH_SIZE`
 * (services/config/SpeechConfig.ts), `Whisper.layer` and `TranscriberLive` all default to it.
 * Memory against speed: whisper-base, 10-minute file: 1 → 717 MB peak, 25.5 s; 4 → 930 MB,
 * 18.9 s; 8 → 1.37 GB, no faster (bench/README.md). A file of its own so that configuration
 * can read it without loading ONNX Runtime.
 */
export const defaultBatchSize = 4
