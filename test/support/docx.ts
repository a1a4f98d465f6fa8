/** Reading docx downloads in tests: zip entries (stored or deflated) and the text of word/document.xml. */
import * as zlib from "node:zlib"

/** Entries of a zip archive, read from its central directory; throws when the archive is not laid out as a zip. */
export const unzip = (bytes: Uint8Array): Map<string, Buffer> => {
  const buf = Buffer.from(bytes)
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new Error("not a zip: no end of central directory")
  const count = buf.readUInt16LE(eocd + 10)
  let at = buf.readUInt32LE(eocd + 16)
  const files = new Map<string, Buffer>()
  for (let i = 0; i < count; i++) {
    const signature = buf.readUInt32LE(at)
    if (signature !== 0x02014b50) {
      throw new Error(`not a zip: central directory entry ${i} at ${at} has signature 0x${signature.toString(16)}`)
    }
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

/** The text of a WordprocessingML document: its <w:t> runs joined, entities decoded. */
export const wordRunsText = (xml: string): string =>
  [...xml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) =>
    m[1]!.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&apos;/g, "'").replace(/&amp;/g, "&")
  ).join("")

/** The text of a docx download (empty when it has no word/document.xml). */
export const docxText = (bytes: Uint8Array): string =>
  wordRunsText(unzip(bytes).get("word/document.xml")?.toString("utf8") ?? "")
