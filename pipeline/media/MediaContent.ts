/**
 * Whether a file's bytes can be audio or video at all, before anything decodes it: the check
 * behind 415 BAD_MIME on a submit (services/intake/MediaIntake.ts) and the CLI's refusal of the
 * same files, with the same sentence. A recognised non-media format (a PDF, an image, a zip),
 * plain text, or no bytes at all is not media; unrecognised binary may be (the decoder decides,
 * and a file it cannot read is NO_AUDIO).
 */
import { fileTypeFromFile } from "file-type"
import { open } from "node:fs/promises"
import { isAcceptedMime } from "../../src/contract/domain/MediaTypes.ts"

/** Bytes looked at to tell text from media: every accepted container says what it is well inside this. */
const sniffBytes = 4096

/**
 * Printable UTF-8 text (with tabs and line breaks) and nothing else: no media container
 * starts like that, while a transcript, a web page or a JSON error saved as `.wav` does.
 */
const looksLikeText = (head: Uint8Array) => {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(head)
  let printable = 0
  for (const char of text) {
    const code = char.codePointAt(0)!
    if (code === 0xfffd) return false
    if (code === 9 || code === 10 || code === 13 || code >= 32) printable++
    else return false
  }
  return printable > 0
}

const readHead = async (path: string) => {
  const handle = await open(path, "r")
  try {
    const buffer = new Uint8Array(sniffBytes)
    const { bytesRead } = await handle.read(buffer, 0, sniffBytes, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

export type MediaContent =
  /** Possibly media; `mime` when its container was recognised. */
  | { readonly _tag: "Media"; readonly mime: string | undefined }
  /** Not audio or video; `error` is the sentence to answer (BAD_MIME). */
  | { readonly _tag: "NotMedia"; readonly error: string }

/** What the bytes at `path` are (see the module comment). The file must exist. */
export const inspectMediaContent = async (path: string): Promise<MediaContent> => {
  const head = await readHead(path)
  if (head.length === 0) return { _tag: "NotMedia", error: "The file is empty (0 bytes), not audio or video." }
  const detected = await fileTypeFromFile(path).catch(() => undefined)
  if (detected !== undefined) {
    // ASF is the container of wma/wmv.
    if (isAcceptedMime(detected.mime) || detected.mime === "application/vnd.ms-asf") return { _tag: "Media", mime: detected.mime }
    return { _tag: "NotMedia", error: `The file's content is ${detected.mime} (.${detected.ext}), not audio or video.` }
  }
  if (looksLikeText(head)) return { _tag: "NotMedia", error: "The file's content is text, not audio or video." }
  return { _tag: "Media", mime: undefined }
}
