/**
 * Domain errors of media decoding. `NoAudio` is the job's NO_AUDIO failure: the file has no audio
 * stream, or its bytes cannot be decoded into any audio. `DecodeFailed` is a decoder failure after
 * some audio had already been produced (for example a truncated file whose tail is garbage).
 */
import { Schema } from "effect"

export class NoAudio extends Schema.TaggedError<NoAudio>()("NoAudio", {
  reason: Schema.String
}) {}

export class DecodeFailed extends Schema.TaggedError<DecodeFailed>()("DecodeFailed", {
  reason: Schema.String,
  decodedSeconds: Schema.Finite
}) {}

/**
 * The most telling ffmpeg stderr line, without the input path (paths are internal): a line naming
 * the input's problem (invalid data, no audio stream) wins over generic errors that follow from it
 * ("Error configuring filter graph"); otherwise the last error-like line.
 */
export const ffmpegReason = (stderrTail: ReadonlyArray<string>, fallback: string, inputPath?: string): string => {
  const specific = /invalid data|does not contain any stream|matches no streams|header missing|no such file|not supported|unsupported/i
  const generic = /could not|error|failed|unknown/i
  const clean = (line: string) => {
    let text = line.trim().replace(/^\[[^\]]*\]\s*/, "")
    for (const p of [inputPath, "/in/input", "pipe:0"]) {
      if (p && text.startsWith(`${p}: `)) text = text.slice(p.length + 2)
      if (p) text = text.split(p).join("<input>")
    }
    return text
  }
  const lines = stderrTail.filter((l) => l.trim() !== "" && !l.startsWith("Aborted("))
  for (const pattern of [specific, generic]) {
    for (let i = lines.length - 1; i >= 0; i--) {
      if (pattern.test(lines[i]!)) return clean(lines[i]!)
    }
  }
  return fallback
}

/** The failure to report when a decoder exits: NoAudio when nothing was decoded. */
export const decodeFailure = (
  stderrTail: ReadonlyArray<string>,
  decodedSamples: number,
  sampleRate: number,
  exitedOk: boolean,
  inputPath?: string
): NoAudio | DecodeFailed | undefined => {
  if (decodedSamples === 0) {
    return new NoAudio({
      reason: exitedOk
        ? "the audio stream decoded to no samples"
        : ffmpegReason(stderrTail, "the file could not be decoded", inputPath)
    })
  }
  if (!exitedOk) {
    return new DecodeFailed({
      reason: ffmpegReason(stderrTail, "the decoder stopped with an error", inputPath),
      decodedSeconds: decodedSamples / sampleRate
    })
  }
  return undefined
}
