/**
 * A single-pass, linear tokenizer for the tags of HTML and XML documents from untrusted servers.
 * Regular expressions over whole documents can re-scan the rest of a 5 MB page for every unclosed
 * construct; this scanner consumes each character a bounded number of times instead.
 * Comments, processing instructions, doctypes and CDATA are skipped (CDATA stays in element text);
 * the content of raw-text elements (script, style) is not tokenized.
 */

export interface Tag {
  readonly kind: "open" | "close"
  /** Lower-cased, prefix kept ("itunes:title"). */
  readonly name: string
  /** The raw text between the name and the closing ">". */
  readonly attributes: string
  readonly selfClosing: boolean
  /** Index of "<". */
  readonly start: number
  /** Index after ">". */
  readonly end: number
}

const NAME = /[A-Za-z][\w:.-]*/y

const skipTo = (text: string, from: number, marker: string): number => {
  const at = text.indexOf(marker, from)
  return at === -1 ? text.length : at + marker.length
}

export const tokenize = (text: string, rawTextElements: ReadonlySet<string> = new Set()): Array<Tag> => {
  const tags: Array<Tag> = []
  let position = 0
  while (position < text.length) {
    const lt = text.indexOf("<", position)
    if (lt === -1) break
    if (text.startsWith("<!--", lt)) {
      position = skipTo(text, lt + 4, "-->")
      continue
    }
    if (text.startsWith("<![CDATA[", lt)) {
      position = skipTo(text, lt + 9, "]]>")
      continue
    }
    if (text.startsWith("<?", lt) || text.startsWith("<!", lt)) {
      position = skipTo(text, lt + 2, ">")
      continue
    }
    const closing = text[lt + 1] === "/"
    NAME.lastIndex = lt + (closing ? 2 : 1)
    const nameMatch = NAME.exec(text)
    if (nameMatch === null) {
      position = lt + 1
      continue
    }
    // Find the ">" that ends the tag; a quote opens a value only right after "=".
    let i = NAME.lastIndex
    let quote: string | undefined
    let lastNonSpace = ""
    for (; i < text.length; i++) {
      const c = text[i]!
      if (quote !== undefined) {
        if (c === quote) quote = undefined
      } else if ((c === "\"" || c === "'") && lastNonSpace === "=") {
        quote = c
      } else if (c === ">") {
        break
      }
      if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") lastNonSpace = c
    }
    if (i >= text.length) break
    const name = nameMatch[0].toLowerCase()
    const inner = text.slice(NAME.lastIndex, i)
    const selfClosing = !closing && inner.trimEnd().endsWith("/")
    tags.push({ kind: closing ? "close" : "open", name, attributes: inner, selfClosing, start: lt, end: i + 1 })
    position = i + 1
    if (!closing && !selfClosing && rawTextElements.has(name)) {
      const closer = new RegExp(`</${name}\\s*>`, "gi")
      closer.lastIndex = position
      const found = closer.exec(text)
      if (found === null) break
      tags.push({ kind: "close", name, attributes: "", selfClosing: false, start: found.index, end: found.index + found[0].length })
      position = found.index + found[0].length
    }
  }
  return tags
}

export interface Element {
  readonly name: string
  readonly attributes: string
  readonly children: Array<Element>
  /** Content range in the source (empty for self-closing or unclosed elements). */
  contentStart: number
  contentEnd: number
}

/** Deeper elements become leaves, which bounds the work of matching close tags in hostile input. */
const MAX_DEPTH = 128

/**
 * A tolerant element tree: a close tag closes the nearest open element of that name (closing any left
 * open inside it); a close tag with no open match is ignored.
 */
export const buildTree = (text: string): Element => {
  const root: Element = { name: "#root", attributes: "", children: [], contentStart: 0, contentEnd: text.length }
  const stack: Array<Element> = [root]
  for (const tag of tokenize(text)) {
    if (tag.kind === "open") {
      const element: Element = {
        name: tag.name,
        attributes: tag.attributes.replace(/\/\s*$/, ""),
        children: [],
        contentStart: tag.end,
        contentEnd: tag.end
      }
      stack[stack.length - 1]!.children.push(element)
      if (!tag.selfClosing && stack.length < MAX_DEPTH) stack.push(element)
      continue
    }
    let depth = stack.length - 1
    while (depth > 0 && stack[depth]!.name !== tag.name) depth--
    if (depth === 0) continue
    stack[depth]!.contentEnd = tag.start
    stack.length = depth
  }
  return root
}

/** Descendants named `name`, in document order, not looking inside matches. */
export const findAll = (element: Element, name: string): Array<Element> => {
  const found: Array<Element> = []
  const pending: Array<Element> = [...element.children].reverse()
  while (pending.length > 0) {
    const node = pending.pop()!
    if (node.name === name) found.push(node)
    else for (let i = node.children.length - 1; i >= 0; i--) pending.push(node.children[i]!)
  }
  return found
}
