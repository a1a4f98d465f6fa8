/**
 * The first bytes of containers other than WAV, enough for a sniffer to name them: an ISO
 * BMFF `ftyp` box with a brand (mp4 / m4a), an EBML header with DocType `webm`, and an Ogg
 * page opening an Opus stream. They hold no playable media; the playback tests only read
 * the type they are served with.
 */
const box = (type: string, body: Buffer) => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(8 + body.length)
  head.write(type, 4, "ascii")
  return Buffer.concat([head, body])
}

const isoMedia = (brand: string) =>
  Buffer.concat([
    box("ftyp", Buffer.concat([Buffer.from(brand, "ascii"), Buffer.alloc(4), Buffer.from(`${brand}isom`, "ascii")])),
    box("mdat", Buffer.alloc(256, 7))
  ])

const ebml = (id: ReadonlyArray<number>, body: Buffer) => Buffer.concat([Buffer.from(id), Buffer.from([0x80 | body.length]), body])

const oggOpus = () => {
  const page = Buffer.alloc(28)
  page.write("OggS", 0, "ascii")
  page[5] = 2 // first page of the stream
  page[26] = 1 // one segment
  page[27] = 19 // of the OpusHead packet's length
  return Buffer.concat([page, Buffer.from("OpusHead", "ascii"), Buffer.from([1, 1, 0, 0, 0x80, 0xbb, 0, 0, 0, 0, 0]), Buffer.alloc(256)])
}

const bytes = (buffer: Buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length)

export const mp4Bytes = () => bytes(isoMedia("isom"))
export const m4aBytes = () => bytes(isoMedia("M4A "))
export const webmBytes = () =>
  bytes(Buffer.concat([
    ebml([0x1a, 0x45, 0xdf, 0xa3], Buffer.concat([ebml([0x42, 0x86], Buffer.from([1])), ebml([0x42, 0x82], Buffer.from("webm"))])),
    Buffer.alloc(256, 3)
  ]))
export const opusBytes = () => bytes(oggOpus())
