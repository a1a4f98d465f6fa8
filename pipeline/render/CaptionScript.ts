/**
 * The ASS subtitle script burned into a clip by libass.
 *
 * Canvas 1080×1920 (PlayRes = output size, so sizes are pixels). Caption style: DejaVu Sans
 * Bold 76 px, white with a 5 px black outline and a soft shadow, bottom-centred with 80 px
 * side margins and the text's baseline 380 px above the bottom edge — clear of the controls
 * and captions that vertical-video players draw over the lowest fifth. At most two lines per
 * cue (libass wraps inside the margins).
 *
 * Cues: words are grouped in order; a cue closes before a word that would take it past
 * `maxCueChars`, after a gap of more than `maxGapSeconds`, or after a word ending a sentence.
 * A cue shows from its first word's start until its last word's end (held up to 0.4 s more,
 * never into the next cue).
 * - `karaoke`: the whole cue is shown in white and each word turns yellow when it is spoken
 *   (`{\k}` durations from the word times, in centiseconds);
 * - `line`: the cue in white, one phrase at a time;
 * - `none`: no captions (the script may still carry the title of an audio clip).
 * An audio clip's title is drawn at the top in the `Title` style for the whole clip.
 */

export type CaptionStyle = "karaoke" | "line" | "none"

/** A word with times in seconds from the start of the clip. */
export interface TimedWord {
  readonly start: number
  readonly end: number
  readonly text: string
}

export const canvas = { width: 1080, height: 1920 } as const

/** Karaoke highlight and plain caption colours (RGB), for tests that look for them. */
export const captionColors = { spoken: [255, 221, 0], text: [255, 255, 255] } as const

const maxCueChars = 32
const maxGapSeconds = 0.8
const holdSeconds = 0.4

/** ASS colours are &HAABBGGRR. */
const assColor = ([r, g, b]: readonly [number, number, number] | readonly number[]) =>
  `&H00${[b, g, r].map((c) => c!.toString(16).padStart(2, "0").toUpperCase()).join("")}`

const timestamp = (seconds: number) => {
  const cs = Math.max(0, Math.round(seconds * 100))
  const h = Math.floor(cs / 360_000)
  const m = Math.floor((cs % 360_000) / 6000)
  const s = Math.floor((cs % 6000) / 100)
  return `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}.${String(cs % 100).padStart(2, "0")}`
}

/** Override blocks and line breaks are ASS syntax; spoken text must not contain them. */
const plain = (text: string) => text.replace(/[{}]/g, "").replace(/\\/g, "/").replace(/\s+/g, " ").trim()

export const groupCues = (words: ReadonlyArray<TimedWord>): ReadonlyArray<ReadonlyArray<TimedWord>> => {
  const cues: Array<Array<TimedWord>> = []
  let current: Array<TimedWord> = []
  let chars = 0
  for (const word of words) {
    const text = plain(word.text)
    if (text === "") continue
    const previous = current[current.length - 1]
    const tooLong = chars + 1 + text.length > maxCueChars
    const gap = previous !== undefined && word.start - previous.end > maxGapSeconds
    if (current.length > 0 && (tooLong || gap)) {
      cues.push(current)
      current = []
      chars = 0
    }
    current.push({ ...word, text })
    chars += (chars === 0 ? 0 : 1) + text.length
    if (/[.!?]["')\]]?$/.test(text)) {
      cues.push(current)
      current = []
      chars = 0
    }
  }
  if (current.length > 0) cues.push(current)
  return cues
}

const karaokeText = (cue: ReadonlyArray<TimedWord>) =>
  cue.map((word, i) => {
    const next = cue[i + 1]
    const until = next === undefined ? word.end : next.start
    const centis = Math.max(1, Math.round((until - word.start) * 100))
    return `{\\k${centis}}${word.text}`
  }).join(" ")

export interface CaptionScriptInput {
  readonly style: CaptionStyle
  readonly words: ReadonlyArray<TimedWord>
  readonly durationSeconds: number
  /** Drawn at the top for the whole clip (audio sources). */
  readonly title?: string | undefined
}

export const captionScript = (input: CaptionScriptInput): string => {
  const white = assColor(captionColors.text)
  const yellow = assColor(captionColors.spoken)
  // Karaoke: Primary is the colour a word takes once spoken, Secondary the colour before.
  const primary = input.style === "karaoke" ? yellow : white
  const header = [
    "[Script Info]",
    "ScriptType: v4.00+",
    `PlayResX: ${canvas.width}`,
    `PlayResY: ${canvas.height}`,
    "WrapStyle: 0",
    "ScaledBorderAndShadow: yes",
    "",
    "[V4+ Styles]",
    "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, " +
    "Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, " +
    "MarginV, Encoding",
    `Style: Caption,DejaVu Sans,76,${primary},${white},&H00000000,&H96000000,-1,0,0,0,100,100,0,0,1,5,2,2,80,80,380,1`,
    `Style: Title,DejaVu Sans,64,${white},${white},&H00000000,&H96000000,-1,0,0,0,100,100,0,0,1,4,0,8,90,90,260,1`,
    "",
    "[Events]",
    "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text"
  ]
  const events: Array<string> = []
  const title = input.title === undefined ? "" : plain(input.title)
  if (title !== "") {
    events.push(`Dialogue: 0,${timestamp(0)},${timestamp(input.durationSeconds)},Title,,0,0,0,,${title}`)
  }
  if (input.style !== "none") {
    const cues = groupCues(input.words)
    cues.forEach((cue, i) => {
      const first = cue[0]!
      const last = cue[cue.length - 1]!
      const nextStart = cues[i + 1]?.[0]?.start ?? Number.POSITIVE_INFINITY
      const end = Math.min(last.end + holdSeconds, nextStart, input.durationSeconds)
      const text = input.style === "karaoke" ? karaokeText(cue) : cue.map((word) => word.text).join(" ")
      events.push(`Dialogue: 1,${timestamp(first.start)},${timestamp(Math.max(end, first.start + 0.1))},Caption,,0,0,0,,${text}`)
    })
  }
  return [...header, ...events, ""].join("\n")
}
