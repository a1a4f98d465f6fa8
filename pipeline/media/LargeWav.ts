/**
 * RIFF/WAVE files over 4 GiB. Their 32-bit size fields cannot state their length, and writers
 * wrap or cap them. ffmpeg trusts the stated length: it stops decoding there (so only part of
 * the recording would be transcribed), and its probe walks whatever follows as chunk headers,
 * 8 bytes at a time through a long stretch of digital silence (a 5 GB file ran into the probe's
 * timeout). So for these files alone:
 * - decoding gets `-ignore_length 1`, which makes the WAV reader take the data to the end of
 *   the file;
 * - the duration is computed here from the format chunk and the file size, without ffprobe
 *   (`MediaDecoder.probe` asks this first).
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
    // Chunks: 4-byte id, 4-byte little-endian size, data padded to an even length.
    for (let at = 12; at + 8 <= got;) {
      const id = head.toString("latin1", at, at + 4)
      const size = head.readUInt32LE(at + 4)
      if (id === "fmt " && at + 16 <= got) byteRate = head.readUInt32LE(at + 16)
      if (id === "data") return byteRate > 0 ? { byteRate, dataOffset: at + 8, fileBytes } : undefined
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

/** Extra ffmpeg input options for `path` (before its `-i`). */
export const inputOptions = (path: string): Array<string> => (largeWav(path) === undefined ? [] : ["-ignore_length", "1"])

/** The probe of a large WAV, read from its header and size; undefined for every other file. */
export const probeLargeWav = (path: string): MediaProbe | undefined => {
  const wav = largeWav(path)
  if (wav === undefined) return undefined
  return { durationSeconds: (wav.fileBytes - wav.dataOffset) / wav.byteRate, hasAudio: true }
}
