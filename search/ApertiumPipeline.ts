/**
 * How a question goes through an Apertium language pair kept running: the pair's mode file
 * (the shell pipeline `apertium` itself runs) rewritten so that every stage flushes its output
 * on a NUL character, and the text put into and read out of Apertium's stream format. Pure.
 *
 * Why not `apertium -z`: its text deformatter and reformatter swallow the NUL, so no answer
 * comes back until stdin closes, and a process per question costs ~200 ms (eight programs
 * loading their dictionaries) where a warm pipeline answers in 2–4 ms (measured on the
 * eng-spa pair, Debian bookworm, 2026-11-27). `lt-proc -b -z` (lttoolbox 3.7.1) still holds
 * its output in stdio's buffer, hence `stdbuf -o0` in front of every stage.
 */

/** ISO 639-1 → Apertium's ISO 639-3 code, for the pairs the question-language rule knows. */
export const apertiumCodes: Readonly<Record<string, string>> = { en: "eng", es: "spa" }

/** The mode file's name for a direction ("spa-eng.mode"), or undefined for a language not listed. */
export const modeName = (from: string, to: string): string | undefined => {
  const a = apertiumCodes[from]
  const b = apertiumCodes[to]
  return a === undefined || b === undefined ? undefined : `${a}-${b}.mode`
}

/**
 * The mode file's pipeline with NUL flushing on every stage. `$1` is the generator's option
 * (`-n`: unknown words unmarked, as `apertium -u`), `$2` the tagger's (none).
 */
export const nullFlushPipeline = (mode: string): string =>
  mode
    .trim()
    .split("|")
    .map((stage) => stage.trim().replaceAll("$1", "-n").replaceAll("$2", "").trim())
    .map((stage) => {
      const space = stage.indexOf(" ")
      const program = space < 0 ? stage : stage.slice(0, space)
      const rest = space < 0 ? "" : stage.slice(space)
      const flushed = /(^|\s)(-z|--null-flush)(\s|$)/.test(rest) ? rest : ` -z${rest}`
      return `stdbuf -o0 ${program}${flushed}`
    })
    .join(" | ")

/**
 * One request in the stream format: a superblank carrying its number (Apertium passes
 * `[...]` through every stage untouched, so an answer names the question it answers), then the
 * text with the format's reserved characters escaped and line breaks and NULs as spaces.
 */
export const streamRequest = (id: number, text: string): string =>
  `[q${id}]${text.replace(/[\0\r\n]+/g, " ").replace(/[\\[\]^$/<>@{}]/g, (c) => `\\${c}`)}\0`

/** A NUL-terminated answer → its request number and text; undefined when it carries no number. */
export const streamAnswer = (answer: string): { readonly id: number; readonly text: string } | undefined => {
  const match = /^\s*\[q(\d+)\]([\s\S]*)$/.exec(answer)
  if (match === null) return undefined
  return { id: Number(match[1]), text: match[2]!.replace(/\\(.)/g, "$1").replace(/\s+/g, " ").trim() }
}
