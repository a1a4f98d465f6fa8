/**
 * htmlparser2 over untrusted pages and feeds, with a bound on nesting.
 *
 * Measured on htmlparser2 12 (2 cores): its parser keeps the open elements in an array it unshifts and
 * searches, so each tag costs time in proportion to the depth. 40,000 unclosed `<div>` took 0.4 s,
 * 80,000 took 9 s, and a 5 MB page of them (the page cap) had not finished after 120 s. Parsing therefore
 * stops when MAX_DEPTH elements are open; the document read up to that point is what counts (a real page
 * or feed nests a few dozen levels deep).
 */
import { DomHandler, Parser, type parseDocument } from "htmlparser2"
import type { DomUtils } from "htmlparser2"

export type MarkupDocument = ReturnType<typeof parseDocument>
export type MarkupElement = ReturnType<typeof DomUtils.findAll>[number]

export const MAX_DEPTH = 256

export interface MarkupCallbacks {
  /** Attribute names are lower case and values decoded; the first of repeated attributes wins. */
  readonly onopentag: (name: string, attributes: Record<string, string>) => void
  /** Also called for void elements and for elements closed implicitly (at the latest at the end). */
  readonly onclosetag: (name: string) => void
  /** Text, with CDATA content and the raw content of script/style/title included as text. */
  readonly ontext: (text: string) => void
}

/**
 * Streams `text` through the parser: HTML (void elements, raw-text script/style, implied end tags) or
 * XML (names folded to lower case, so "pubDate" is "pubdate"; CDATA is text, never elements).
 * Comments, doctypes and processing instructions produce no calls.
 */
export const scanMarkup = (text: string, callbacks: MarkupCallbacks, mode: "html" | "xml"): void => {
  let depth = 0
  const parser: Parser = new Parser(
    {
      onopentag: (name, attributes) => {
        callbacks.onopentag(name, attributes)
        depth++
        if (depth >= MAX_DEPTH) parser.pause()
      },
      onclosetag: (name) => {
        depth--
        callbacks.onclosetag(name)
      },
      ontext: callbacks.ontext
    },
    mode === "xml" ? { xmlMode: true, lowerCaseTags: true, lowerCaseAttributeNames: true } : {}
  )
  parser.end(text)
}

/** The same parse as `scanMarkup`, as a DOM for domutils queries (elements and text only). */
export const parseMarkup = (text: string, mode: "html" | "xml"): MarkupDocument => {
  const dom = new DomHandler()
  scanMarkup(text, {
    onopentag: (name, attributes) => dom.onopentag(name, attributes),
    onclosetag: () => dom.onclosetag(),
    ontext: (data) => dom.ontext(data)
  }, mode)
  return dom.root
}
