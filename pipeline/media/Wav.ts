/**
 * The canonical 44-byte header of a 16-bit PCM WAV, and a whole mono 16-bit WAV from float
 * samples. One writer for every place that hands audio to a decoder as a file (clip word
 * alignment, benchmarks, tests).
 */

export interface WavFormat {
  readonly sampleRate: number
  readonly channels: number
  /** Bytes of sample data that follow the header (capped to what the 32-bit sizes can say). */
  readonly dataBytes: number
}

export const WAV_HEADER_BYTES = 44

export const wavHeader = ({ channels, dataBytes, sampleRate }: WavFormat): Buffer => {
  const data = Math.min(dataBytes, 0xffffffff - 36)
  const header = Buffer.alloc(WAV_HEADER_BYTES)
  header.write("RIFF", 0, "ascii")
  header.writeUInt32LE(36 + data, 4)
  header.write("WAVEfmt ", 8, "ascii")
  header.writeUInt32LE(16, 16) // fmt chunk size
  header.writeUInt16LE(1, 20) // PCM
  header.writeUInt16LE(channels, 22)
  header.writeUInt32LE(sampleRate, 24)
  header.writeUInt32LE(sampleRate * channels * 2, 28) // bytes per second
  header.writeUInt16LE(channels * 2, 32) // block align
  header.writeUInt16LE(16, 34) // bits per sample
  header.write("data", 36, "ascii")
  header.writeUInt32LE(data, 40)
  return header
}

/** A mono 16-bit WAV of `samples` (clipped to [-1, 1]). */
export const pcm16Wav = (samples: Float32Array, sampleRate: number): Buffer => {
  const out = Buffer.alloc(WAV_HEADER_BYTES + samples.length * 2)
  wavHeader({ sampleRate, channels: 1, dataBytes: samples.length * 2 }).copy(out)
  for (let i = 0; i < samples.length; i++) {
    out.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767), WAV_HEADER_BYTES + i * 2)
  }
  return out
}
