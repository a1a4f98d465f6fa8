/**
 * s16le PCM bytes → Float32 samples in [-1, 1), the scale Whisper and Silero expect (x / 32768).
 * Byte chunks from a pipe may split a sample in two; the odd byte is carried to the next chunk.
 */
export class Pcm16Reader {
  private carry: number | null = null

  /** Converts one byte chunk; returns the whole samples it completes (possibly none). */
  push(bytes: Uint8Array): Float32Array {
    let view = bytes
    if (this.carry !== null && bytes.length > 0) {
      const joined = new Uint8Array(bytes.length + 1)
      joined[0] = this.carry
      joined.set(bytes, 1)
      view = joined
      this.carry = null
    }
    const count = view.length >> 1
    if (view.length % 2 === 1) this.carry = view[view.length - 1]!
    const out = new Float32Array(count)
    const data = new DataView(view.buffer, view.byteOffset, count * 2)
    for (let i = 0; i < count; i++) out[i] = data.getInt16(i * 2, true) / 32768
    return out
  }
}
