/**
 * RIFF/WAVE files over 4 GiB. Their 32-bit size fields cannot state their length, and writers
 * wrap or cap them. ffmpeg trusts the stated length: it stops decoding there (so only part of
 * the recording would be transcribed), and after the stated end of the data it looks for more
 * chunks, walking whatever follows 8 bytes at a time (through a long stretch of digital silence
 * that takes seconds natively and, in the WASM build, ran into the probe's timeout and held a
 * decode or a clip render for minutes before a single sample). So for these files alone:
 * - the WASM ffmpeg reads them as the raw PCM they hold: its format, rate and channel count from
 *   the format chunk, the header skipped (`-skip_initial_bytes`), so nothing is walked and a
 *   seek is a byte offset;
 * - a native ffmpeg, whose version we do not know (the raw demuxer's channel option was renamed
 *   in 5.1 and the old name removed in 7.0), and any coding that is not plain PCM, get
 *   `-ignore_length 1`, which makes the WAV reader take the data to the end of the file;
 * - the duration is computed here from the format chunk and the file size, without ffprobe
 *   (`MediaDecoder.probe` asks this first; clip rendering skips its ffprobe too).
 * RF64/BW64 files state 64-bit sizes and are left to ffmpeg, as is every smaller file.
 */
import * as fs from "node:fs"
import type { MediaProbe } from "./MediaBackend.ts"

const FOUR_GIB = 0x1_0000_0000
/** How far into the file the `data` chunk is looked for. */
const HEADER_SCAN_BYTES = 1 << 20

interface LargeWav {
  /** Bytes of audio per second (the format chunk's byte rate). */
  readonly byteRate: number
  /** ffmpeg's raw demuxer for the samples, when they are plain PCM or float. */
  readonly raw: { readonly format: string; readonly sampleRate: number; readonly channels: number } | undefined
  /** Offset of the first audio byte. */
  readonly dataOffset: number
  readonly fileBytes: number
}

/** The layout of `path` when it is a RIFF/WAVE file over 4 GiB with a readable format chunk. */
const largeWav = (path: string): LargeWav | undefined => {
  let fd: number | undefined
  try {
    fd = fs.openSync(path, "r")
    const fileBytes = fs.fstatSync(fd).size
    if (fileBytes <= FOUR_GIB) return undefined
    const head = Buffer.alloc(HEADER_SCAN_BYTES)
    const got = fs.readSync(fd, head, 0, head.length, 0)
    if (got < 12 || head.toString("latin1", 0, 4) !== "RIFF" || head.toString("latin1", 8, 12) !== "WAVE") return undefined
    let byteRate = 0
    let raw: LargeWav["raw"]
    // Chunks: 4-byte id, 4-byte little-endian size, data padded to an even length.
    for (let at = 12; at + 8 <= got;) {
      const id = head.toString("latin1", at, at + 4)
      const size = head.readUInt32LE(at + 4)
      if (id === "fmt " && at + 24 <= got) {
        byteRate = head.readUInt32LE(at + 16)
        // WAVE_FORMAT_EXTENSIBLE names the real coding in the first 2 bytes of its sub-format.
        const tag = head.readUInt16LE(at + 8) === 0xfffe && size >= 40 && at + 34 <= got
          ? head.readUInt16LE(at + 32)
          : head.readUInt16LE(at + 8)
        const format = rawFormat(tag, head.readUInt16LE(at + 22))
        const channels = head.readUInt16LE(at + 10)
        raw = format === undefined || channels === 0 ? undefined : { format, sampleRate: head.readUInt32LE(at + 12), channels }
      }
      if (id === "data") return byteRate > 0 ? { byteRate, raw, dataOffset: at + 8, fileBytes } : undefined
      at += 8 + size + (size % 2)
    }
    return undefined
  } catch {
    // An unreadable file is the decoder's to report.
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** The raw demuxer for a format tag (1 PCM, 3 IEEE float) and sample width. */
const rawFormat = (tag: number, bits: number): string | undefined =>
  tag === 1
    ? ({ 8: "u8", 16: "s16le", 24: "s24le", 32: "s32le" } as Record<number, string>)[bits]
    : tag === 3
    ? ({ 32: "f32le", 64: "f64le" } as Record<number, string>)[bits]
    : undefined

/**
 * Extra ffmpeg input options for `path` (before its `-i`); none for every file but a large WAV.
 * `backend` is the ffmpeg that reads it: the WASM build is FFmpeg 5.1, whose options are known.
 */
export const inputOptions = (path: string, backend: "wasm" | "native"): Array<string> => {
  const wav = largeWav(path)
  if (wav === undefined) return []
  if (backend === "native" || wav.raw === undefined) return ["-ignore_length", "1"]
  return [
    "-f",
    wav.raw.format,
    "-sample_rate",
    String(wav.raw.sampleRate),
    "-ch_layout",
    `${wav.raw.channels}c`,
    "-skip_initial_bytes",
    String(wav.dataOffset)
  ]
}

/** The probe of a large WAV, read from its header and size; undefined for every other file. */
export const probeLargeWav = (path: string): MediaProbe | undefined => {
  const wav = largeWav(path)
  if (wav === undefined) return undefined
  return { durationSeconds: (wav.fileBytes - wav.dataOffset) / wav.byteRate, hasAudio: true }
}
