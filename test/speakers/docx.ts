/** The text of a docx download: its word/document.xml runs, joined (stored or deflated zip entries). */
import * as zlib from "node:zlib"

const unzip = (bytes: Uint8Array): Map<string, Buffer> => {
  const buf = Buffer.from(bytes)
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new Error("not a zip: no end of central directory")
  const count = buf.readUInt16LE(eocd + 10)
  let at = buf.readUInt32LE(eocd + 16)
  const files = new Map<string, Buffer>()
  for (let i = 0; i < count; i++) {
    const method = buf.readUInt16LE(at + 10)
    const compressed = buf.readUInt32LE(at + 20)
    const nameLength = buf.readUInt16LE(at + 28)
    const extra = buf.readUInt16LE(at + 30)
    const comment = buf.readUInt16LE(at + 32)
    const local = buf.readUInt32LE(at + 42)
    const name = buf.toString("utf8", at + 46, at + 46 + nameLength)
    const dataAt = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28)
    const data = buf.subarray(dataAt, dataAt + compressed)
    files.set(name, method === 8 ? zlib.inflateRawSync(data) : Buffer.from(data))
    at += 46 + nameLength + extra + comment
  }
  return files
}

export const docxText = (bytes: Uint8Array): string => {
  const xml = unzip(bytes).get("word/document.xml")?.toString("utf8") ?? ""
  return [...xml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) =>
    m[1]!.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&apos;/g, "'").replace(/&amp;/g, "&")
  ).join("")
}
