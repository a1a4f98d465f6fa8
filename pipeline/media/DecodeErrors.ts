/**
 * Domain errors of media decoding. `NoAudio` is the job's NO_AUDIO failure: the file has no audio
 * stream, or its bytes cannot be decoded into any audio; its `reason` is words for the person
 * who sent the file (`noAudioReason`), never ffmpeg's own line alone. `DecodeFailed` is a decoder failure after
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

/**
 * What a decoder's stderr means for the person who sent the file, as the end of
 * `noAudioMessage`'s sentence: the same words from the native and the WASM ffmpeg (whose lines
 * differ: "Stream map '0:a:0' matches no streams", "Output file does not contain any stream",
 * "Failed to read frame size: Could not seek…", "Invalid data found when processing input"), for
 * the server's NO_AUDIO and the CLI alike. A line matching neither kind is quoted, without paths.
 */
const noAudioKinds: ReadonlyArray<readonly [RegExp, string]> = [
  [/matches no streams|does not contain any stream|no audio stream/i, "it has no audio stream (a video without sound?)"],
  [
    /invalid data|header missing|could not seek|failed to read frame size|moov atom not found|could not find codec|end of file|not supported|unsupported/i,
    "its content is not audio or video that can be read (damaged, cut short, or another kind of file)"
  ]
]

/** Why nothing could be decoded from the input, in words (see `noAudioKinds`). */
export const noAudioReason = (stderrTail: ReadonlyArray<string>, exitedOk: boolean, inputPath?: string): string => {
  if (exitedOk) return "its audio stream holds no sound"
  const telling = ffmpegReason(stderrTail, "", inputPath)
  for (const [pattern, reason] of noAudioKinds) {
    if (stderrTail.some((line) => pattern.test(line))) return reason
  }
  return telling === "" ? "it could not be decoded" : `it could not be decoded (ffmpeg: ${telling})`
}

/** The reason of a file with no bytes at all (no decoder is started for it). */
export const emptyFileReason = "the file is empty (0 bytes)"

/**
 * The one sentence for a NO_AUDIO failure: a failed job's `error` (server) and the line the CLI
 * prints. `reason` is a `NoAudio` / `NoAudioInFile` reason.
 */
export const noAudioMessage = (reason: string): string => `The file has no usable audio: ${reason}.`

/** The failure to report when a decoder exits: NoAudio when nothing was decoded. */
export const decodeFailure = (
  stderrTail: ReadonlyArray<string>,
  decodedSamples: number,
  sampleRate: number,
  exitedOk: boolean,
  inputPath?: string
): NoAudio | DecodeFailed | undefined => {
  if (decodedSamples === 0) {
    return new NoAudio({ reason: noAudioReason(stderrTail, exitedOk, inputPath) })
  }
  if (!exitedOk) {
    return new DecodeFailed({
      reason: ffmpegReason(stderrTail, "the decoder stopped with an error", inputPath),
      decodedSeconds: decodedSamples / sampleRate
    })
  }
  return undefined
}
