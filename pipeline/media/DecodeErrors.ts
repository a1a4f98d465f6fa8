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
 * The most telling ffmpeg stderr line, without the input path (paths are internal). ffmpeg ends
 * with a summary line for the fatal condition, so the last line that looks like an error wins.
 */
export const ffmpegReason = (stderrTail: ReadonlyArray<string>, fallback: string): string => {
  const telling = /invalid data|does not contain any stream|matches no streams|no such file|could not|error|failed|unknown|not supported|unsupported/i
  for (let i = stderrTail.length - 1; i >= 0; i--) {
    const line = stderrTail[i]!.trim()
    if (line === "" || line.startsWith("Aborted(")) continue
    if (telling.test(line)) return line.replace(/^(\/in\/input|pipe:0|[^\s:]*\/[^\s:]*):\s*/, "")
  }
  return fallback
}

/** The failure to report when a decoder exits: NoAudio when nothing was decoded. */
export const decodeFailure = (
  stderrTail: ReadonlyArray<string>,
  decodedSamples: number,
  sampleRate: number,
  exitedOk: boolean
): NoAudio | DecodeFailed | undefined => {
  if (decodedSamples === 0) {
    return new NoAudio({
      reason: exitedOk
        ? "the audio stream decoded to no samples"
        : ffmpegReason(stderrTail, "the file could not be decoded")
    })
  }
  if (!exitedOk) {
    return new DecodeFailed({
      reason: ffmpegReason(stderrTail, "the decoder stopped with an error"),
      decodedSeconds: decodedSamples / sampleRate
    })
  }
  return undefined
}
