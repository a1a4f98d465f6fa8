/**
 * Whisper token ids → text, from the model folder's tokenizer.json, plus the special
 * and timestamp ids the decoder needs. Everything is derived from the files (ids
 * differ between English-only and multilingual vocabularies), nothing per model.
 *
 * Decoding is byte-level BPE in reverse: each vocabulary string maps its characters
 * back to bytes through GPT-2's byte↔unicode table, and the byte stream is UTF-8
 * decoded, so a multi-byte character split across tokens is rebuilt.
 */

export interface TokenizerJson {
  readonly model: {
    readonly vocab: Readonly<Record<string, number>>
    /** BPE merges in rank order: "a b" strings (older files) or [a, b] pairs. */
    readonly merges?: ReadonlyArray<string | readonly [string, string]>
  }
  readonly added_tokens: ReadonlyArray<{ readonly id: number; readonly content: string; readonly special: boolean }>
}

export interface GenerationConfigJson {
  readonly alignment_heads?: ReadonlyArray<readonly [number, number]>
  readonly begin_suppress_tokens?: ReadonlyArray<number>
  readonly suppress_tokens?: ReadonlyArray<number>
  readonly decoder_start_token_id: number
  readonly eos_token_id: number
  readonly is_multilingual?: boolean
  readonly lang_to_id?: Readonly<Record<string, number>>
  readonly task_to_id?: Readonly<Record<string, number>>
  readonly max_initial_timestamp_index?: number
  readonly max_length?: number
  readonly no_timestamps_token_id: number
}

export interface SpecialTokens {
  readonly eot: number
  readonly sot: number
  /** `<|startofprev|>`: opens the previous-text prompt that precedes `sot`. */
  readonly sotPrev: number
  readonly transcribe: number
  readonly translate: number
  readonly noSpeech: number
  readonly noTimestamps: number
  readonly timestampBegin: number
  /** ISO code ("en") → language token id; empty for English-only models. */
  readonly languages: ReadonlyMap<string, number>
}

/** GPT-2 bytes_to_unicode, inverted: unicode code point → byte. */
const byteDecoder = (): Map<number, number> => {
  const printable: Array<number> = []
  for (let b = 33; b <= 126; b++) printable.push(b)
  for (let b = 161; b <= 172; b++) printable.push(b)
  for (let b = 174; b <= 255; b++) printable.push(b)
  const map = new Map<number, number>()
  for (const b of printable) map.set(b, b)
  let n = 0
  for (let b = 0; b < 256; b++) {
    if (!printable.includes(b)) {
      map.set(256 + n, b)
      n++
    }
  }
  return map
}

export interface WhisperTokenizer {
  readonly special: SpecialTokens
  readonly vocabSize: number
  /** Raw bytes of one token (empty for special and timestamp tokens). */
  readonly tokenBytes: (id: number) => Uint8Array
  /** Text of the text tokens among `ids` (special and timestamp ids are skipped). */
  readonly decode: (ids: ReadonlyArray<number>) => string
  /** Token string as stored (e.g. "<|0.00|>" or "Ġworld"), for diagnostics. */
  readonly tokenString: (id: number) => string
  /**
   * Text → text token ids (byte-level BPE, GPT-2 pre-tokenization, no special tokens), the
   * inverse of `decode`: what a user's prompt costs in tokens and what the decoder is fed.
   */
  readonly encode: (text: string) => Array<number>
}

/** GPT-2's pre-tokenization: contractions, letter runs, digit runs, other runs, each with one leading space. */
const PRE_TOKEN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu

const idOf = (tokens: Map<string, number>, content: string): number => {
  const id = tokens.get(content)
  if (id === undefined) throw new Error(`tokenizer.json has no ${content}`)
  return id
}

export const makeTokenizer = (tokenizer: TokenizerJson, generation: GenerationConfigJson): WhisperTokenizer => {
  const strings: Array<string> = []
  const added = new Map<string, number>()
  for (const [token, id] of Object.entries(tokenizer.model.vocab)) strings[id] = token
  for (const t of tokenizer.added_tokens) {
    strings[t.id] = t.content
    added.set(t.content, t.id)
  }
  const timestampBegin = idOf(added, "<|0.00|>")
  const eot = idOf(added, "<|endoftext|>")
  const decoderMap = byteDecoder()
  const bytesCache: Array<Uint8Array | undefined> = []
  const empty = new Uint8Array(0)

  const languages = new Map<string, number>()
  if (generation.is_multilingual !== false && generation.lang_to_id !== undefined) {
    for (const [token, id] of Object.entries(generation.lang_to_id)) languages.set(token.replace(/^<\|(.*)\|>$/, "$1"), id)
  }
  const special: SpecialTokens = {
    eot,
    sot: generation.decoder_start_token_id,
    sotPrev: idOf(added, "<|startofprev|>"),
    transcribe: generation.task_to_id?.["transcribe"] ?? idOf(added, "<|transcribe|>"),
    translate: generation.task_to_id?.["translate"] ?? idOf(added, "<|translate|>"),
    noSpeech: added.get("<|nocaptions|>") ?? idOf(added, "<|nospeech|>"),
    noTimestamps: generation.no_timestamps_token_id,
    timestampBegin,
    languages
  }

  const tokenBytes = (id: number): Uint8Array => {
    if (id >= eot) return empty
    const cached = bytesCache[id]
    if (cached !== undefined) return cached
    const s = strings[id] ?? ""
    const out: Array<number> = []
    for (const ch of s) {
      const b = decoderMap.get(ch.codePointAt(0)!)
      if (b !== undefined) out.push(b)
    }
    const bytes = Uint8Array.from(out)
    bytesCache[id] = bytes
    return bytes
  }

  const utf8 = new TextDecoder("utf-8")
  const decode = (ids: ReadonlyArray<number>): string => {
    let total = 0
    for (const id of ids) total += tokenBytes(id).length
    const buf = new Uint8Array(total)
    let pos = 0
    for (const id of ids) {
      const b = tokenBytes(id)
      buf.set(b, pos)
      pos += b.length
    }
    return utf8.decode(buf)
  }

  // Encoding: bytes → GPT-2 unicode stand-ins, then merges by rank until none applies.
  const byteChar: Array<string> = []
  for (const [code, b] of decoderMap) byteChar[b] = String.fromCodePoint(code)
  const ranks = new Map<string, number>()
  ;(tokenizer.model.merges ?? []).forEach((m, rank) => ranks.set(typeof m === "string" ? m : `${m[0]} ${m[1]}`, rank))
  const vocab = new Map(Object.entries(tokenizer.model.vocab))
  const wordCache = new Map<string, Array<number>>()
  const utf8Encoder = new TextEncoder()

  const bpe = (word: string): Array<number> => {
    const cached = wordCache.get(word)
    if (cached !== undefined) return cached
    let parts = [...word]
    while (parts.length > 1) {
      let best = -1
      let bestRank = Infinity
      for (let i = 0; i < parts.length - 1; i++) {
        const rank = ranks.get(`${parts[i]} ${parts[i + 1]}`)
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank
          best = i
        }
      }
      if (best < 0) break
      const left = parts[best]!
      const right = parts[best + 1]!
      const merged: Array<string> = []
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === left && parts[i + 1] === right) {
          merged.push(left + right)
          i++
        } else {
          merged.push(parts[i]!)
        }
      }
      parts = merged
    }
    // Every single byte is in the vocabulary, so a part without an id cannot occur; skip it defensively.
    const ids = parts.flatMap((p) => {
      const id = vocab.get(p)
      return id === undefined ? [] : [id]
    })
    if (wordCache.size < 10_000) wordCache.set(word, ids)
    return ids
  }

  const encode = (text: string): Array<number> => {
    const ids: Array<number> = []
    for (const [piece] of text.matchAll(PRE_TOKEN)) {
      let mapped = ""
      for (const b of utf8Encoder.encode(piece)) mapped += byteChar[b]!
      ids.push(...bpe(mapped))
    }
    return ids
  }

  return {
    special,
    vocabSize: strings.length,
    tokenBytes,
    decode,
    tokenString: (id) => strings[id] ?? "",
    encode
  }
}
