/**
 * BERT uncased WordPiece tokenizer, as the MiniLM folder's `tokenizer.json` describes it
 * (BertNormalizer with lower-casing and accent stripping, BertPreTokenizer, WordPiece with
 * `##` continuations, `[CLS] … [SEP]`). Pure: the vocabulary comes in from the JSON file.
 *
 * Ids are exactly those of the `tokenizers` library for the texts of
 * `models/fixtures/minilm_reference.json` (accents, punctuation, emoji → `[UNK]`).
 */

export interface WordPieceJson {
  readonly model: {
    readonly vocab: Readonly<Record<string, number>>
    readonly unk_token: string
    readonly continuing_subword_prefix: string
    readonly max_input_chars_per_word: number
  }
  readonly truncation: { readonly max_length: number } | null
}

export interface WordPieceTokenizer {
  /** `[CLS] pieces… [SEP]`, truncated to the model's maximum length (256 for MiniLM). */
  readonly encode: (text: string) => Int32Array
}

const isCjk = (cp: number): boolean =>
  (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df) ||
  (cp >= 0x2a700 && cp <= 0x2b73f) || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b920 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f)

// "Other" categories (control, format, surrogate, private use, unassigned) are dropped,
// except the three whitespace controls, which become spaces.
const otherCategory = /\p{C}/u
const whitespace = /\s/u
const combiningMark = /\p{Mn}/gu
// BERT treats every ASCII symbol as punctuation, plus Unicode category P.
const punctuation = /[\p{P}!-/:-@[-`{-~]/u

/** clean_text + handle_chinese_chars + strip_accents + lowercase, in that order. */
const normalize = (text: string): string => {
  let out = ""
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    if (cp === 0 || cp === 0xfffd) continue
    if (ch === "\t" || ch === "\n" || ch === "\r" || whitespace.test(ch)) {
      out += " "
    } else if (otherCategory.test(ch)) {
      continue
    } else if (isCjk(cp)) {
      out += ` ${ch} `
    } else {
      out += ch
    }
  }
  return out.normalize("NFD").replace(combiningMark, "").toLowerCase()
}

/** Whitespace split, then every punctuation character becomes a word of its own. */
const preTokenize = (text: string): Array<string> => {
  const words: Array<string> = []
  for (const chunk of text.split(/\s+/u)) {
    let current = ""
    for (const ch of chunk) {
      if (punctuation.test(ch)) {
        if (current !== "") words.push(current)
        words.push(ch)
        current = ""
      } else {
        current += ch
      }
    }
    if (current !== "") words.push(current)
  }
  return words
}

export const makeWordPiece = (json: WordPieceJson): WordPieceTokenizer => {
  const vocab = new Map(Object.entries(json.model.vocab))
  const id = (token: string): number => {
    const value = vocab.get(token)
    if (value === undefined) throw new Error(`tokenizer.json has no ${token}`)
    return value
  }
  const unk = id(json.model.unk_token)
  const cls = id("[CLS]")
  const sep = id("[SEP]")
  const prefix = json.model.continuing_subword_prefix
  const maxChars = json.model.max_input_chars_per_word
  const maxLength = json.truncation?.max_length ?? 512

  // Greedy longest-match-first; a word with any unmatched remainder is one [UNK].
  const wordPieces = (word: string, into: Array<number>): void => {
    const chars = Array.from(word)
    if (chars.length > maxChars) {
      into.push(unk)
      return
    }
    const pieces: Array<number> = []
    let start = 0
    while (start < chars.length) {
      let end = chars.length
      let found: number | undefined
      while (start < end) {
        const sub = (start > 0 ? prefix : "") + chars.slice(start, end).join("")
        found = vocab.get(sub)
        if (found !== undefined) break
        end--
      }
      if (found === undefined) {
        into.push(unk)
        return
      }
      pieces.push(found)
      start = end
    }
    into.push(...pieces)
  }

  const encode = (text: string): Int32Array => {
    const ids: Array<number> = [cls]
    const limit = maxLength - 1
    for (const word of preTokenize(normalize(text))) {
      wordPieces(word, ids)
      if (ids.length >= limit) break
    }
    ids.length = Math.min(ids.length, limit)
    ids.push(sep)
    return Int32Array.from(ids)
  }

  return { encode }
}
