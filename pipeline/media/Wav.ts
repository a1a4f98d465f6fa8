/**
 * The canonical 44-byte header of a 16-bit PCM WAV, and a whole mono 16-bit WAV from float
 * samples. One writer for every place that hands audio to a decoder as a file (clip word
 * alignment, benchmarks, tests).
 */

export interface WavFormat {
  readonly sampleRate: number
  readonly channels: number
  /**
   * Bytes of sample data that follow the header. Beyond what the 32-bit sizes can say, both
   * sizes are written as 0xFFFFFFFF, the "until the end of the file" convention of streamed
   * WAV: ffmpeg then reads (and ffprobe times) every byte. A capped size instead made ffmpeg
   * stop at 4 GiB and walk the rest as chunk headers, so probing a 5 GB file took minutes.
   */
  readonly dataBytes: number
}

export const WAV_HEADER_BYTES = 44

export const wavHeader = ({ channels, dataBytes, sampleRate }: WavFormat): Buffer => {
  const fits = 36 + dataBytes <= 0xffffffff
  const header = Buffer.alloc(WAV_HEADER_BYTES)
  header.write("RIFF", 0, "ascii")
  header.writeUInt32LE(fits ? 36 + dataBytes : 0xffffffff, 4)
  header.write("WAVEfmt ", 8, "ascii")
  header.writeUInt32LE(16, 16) // fmt chunk size
  header.writeUInt16LE(1, 20) // PCM
  header.writeUInt16LE(channels, 22)
  header.writeUInt32LE(sampleRate, 24)
  header.writeUInt32LE(sampleRate * channels * 2, 28) // bytes per second
  header.writeUInt16LE(channels * 2, 32) // block align
  header.writeUInt16LE(16, 34) // bits per sample
  header.write("data", 36, "ascii")
  header.writeUInt32LE(fits ? dataBytes : 0xffffffff, 40)
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
