import * as fs from "node:fs"
import { WAV_HEADER_BYTES, wavHeader } from "../../pipeline/media/Wav.ts"

/**
 * Minimal RIFF/WAVE reader for the 16 kHz mono PCM16 test clips in shared/media:
 * walks the chunks, checks the format and returns samples / 32768 as float32.
 */
export const readWavPcm16 = (file: string): { sampleRate: number; samples: Float32Array } => {
  const buf = fs.readFileSync(file)
  if (buf.toString("ascii", 0, 4) !== "RIFF" || buf.toString("ascii", 8, 12) !== "WAVE") {
    throw new Error(`${file}: not a RIFF/WAVE file`)
  }
  let pos = 12
  let sampleRate = 0
  let channels = 0
  let bits = 0
  while (pos + 8 <= buf.length) {
    const id = buf.toString("ascii", pos, pos + 4)
    const size = buf.readUInt32LE(pos + 4)
    const body = pos + 8
    if (id === "fmt ") {
      const format = buf.readUInt16LE(body)
      channels = buf.readUInt16LE(body + 2)
      sampleRate = buf.readUInt32LE(body + 4)
      bits = buf.readUInt16LE(body + 14)
      if (format !== 1 || bits !== 16 || channels !== 1) {
        throw new Error(`${file}: expected mono PCM16, got format ${format}, ${channels} ch, ${bits} bit`)
      }
    } else if (id === "data") {
      const n = Math.floor(Math.min(size, buf.length - body) / 2)
      const samples = new Float32Array(n)
      for (let i = 0; i < n; i++) samples[i] = buf.readInt16LE(body + 2 * i) / 32768
      return { sampleRate, samples }
    }
    pos = body + size + (size & 1)
  }
  throw new Error(`${file}: no data chunk`)
}

/** 16-bit PCM mono WAV bytes (samples × 32768, the exact inverse of `readWavPcm16`). */
export const encodeWav = (samples: Float32Array, sampleRate = 16_000): Uint8Array => {
  const out = Buffer.alloc(WAV_HEADER_BYTES + samples.length * 2)
  wavHeader({ sampleRate, channels: 1, dataBytes: samples.length * 2 }).copy(out)
  for (let i = 0; i < samples.length; i++) {
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32768))), WAV_HEADER_BYTES + i * 2)
  }
  return out
}

export const writeWav = (path: string, samples: Float32Array, sampleRate = 16_000): void =>
  fs.writeFileSync(path, encodeWav(samples, sampleRate))

/**
 * Writes a long 16-bit mono WAV by repeating `samples` `times` times, streaming to disk so a
 * multi-hour test file never exists in memory.
 */
export const writeRepeatedWav = (path: string, samples: Float32Array, times: number, sampleRate = 16_000): void => {
  const one = encodeWav(samples, sampleRate)
  const header = wavHeader({ sampleRate, channels: 1, dataBytes: samples.length * 2 * times })
  const fd = fs.openSync(path, "w")
  try {
    fs.writeSync(fd, header)
    const body = one.subarray(WAV_HEADER_BYTES)
    for (let i = 0; i < times; i++) fs.writeSync(fd, body)
  } finally {
    fs.closeSync(fd)
  }
}
