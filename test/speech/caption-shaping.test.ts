/**
 * The caption shaper's edges, on hand-made phrases (no model): a word longer than a line is cut
 * into line-sized pieces, an SRT label counts toward the first line and stands alone when it
 * leaves no room, a single long word is cut to max_cue_seconds, corrected text is timed over its
 * phrase, and cues prefer sentence ends.
 */
import { describe, expect, it } from "vitest"
import { shapePhrase } from "../../services/formats/CaptionShaping.ts"
import { toSrt } from "../../services/formats/Subtitles.ts"
import type { Segment } from "../../src/contract/domain/Transcript.ts"

const phrase = (text: string, start = 0, end = 10, timed = true): Segment => {
  const words = text.split(" ")
  const step = (end - start) / words.length
  return {
    start,
    end,
    text,
    speaker: null,
    ...(timed ? { words: words.map((t, i) => ({ start: start + i * step, end: start + (i + 0.9) * step, text: t })) } : {})
  }
}

describe("shapePhrase", () => {
  it("cuts a word longer than a line into line-sized pieces", () => {
    const cues = shapePhrase(phrase("see Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch today"), { maxCharsPerLine: 12 }, 0)
    for (const cue of cues) for (const line of cue.lines) expect(line.length).toBeLessThanOrEqual(12)
    expect(cues.flatMap((c) => c.lines).join("")).toBe("seeLlanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogochtoday")
  })

  it("counts the SRT label toward the first line, alone on it when it leaves no room", () => {
    const t = { text: "", language: "en", duration: 10, speech_detected: true, segments: [{ ...phrase("alpha beta gamma delta epsilon"), speaker: "SPEAKER_00", speaker_name: "Dr Emma Clarke-Huntington" }] }
    const srt = toSrt(t, { maxCharsPerLine: 16, maxLinesPerCue: 3 })
    const lines = srt.split("\n").filter((l) => l !== "" && !/^\d+$/.test(l) && !l.includes("-->"))
    expect(lines[0]).toBe("Dr Emma Clarke-Huntington:")
    for (const line of lines.slice(1)) expect(line.length).toBeLessThanOrEqual(16)
    const short = toSrt({ ...t, segments: [{ ...t.segments[0]!, speaker_name: "Ana" }] }, { maxCharsPerLine: 16 })
    for (const line of short.split("\n").filter((l) => !l.includes("-->"))) expect(line.length).toBeLessThanOrEqual(16)
    expect(short).toContain("Ana: alpha beta")
  })

  it("cuts a lone long word to max_cue_seconds and keeps cues in order inside the phrase", () => {
    const cues = shapePhrase(phrase("Hmm. Right then we go", 2, 20), { maxCueSeconds: 3 }, 0)
    let last = 2
    for (const cue of cues) {
      expect(cue.end - cue.start).toBeLessThanOrEqual(3)
      expect(cue.start).toBeGreaterThanOrEqual(last)
      expect(cue.end).toBeLessThanOrEqual(20)
      last = cue.end
    }
  })

  it("times corrected text over its phrase, and ends full cues at a sentence end", () => {
    const corrected = { ...phrase("one two three four five six", 0, 6), text: "One two. Three four five six seven eight." }
    const cues = shapePhrase(corrected, { maxCharsPerLine: 20, maxLinesPerCue: 1 }, 0)
    expect(cues.map((c) => c.lines.join(" "))).toEqual(["One two.", "Three four five six", "seven eight."])
    expect(cues[0]!.start).toBe(0)
    expect(cues[cues.length - 1]!.end).toBeLessThanOrEqual(6)
  })
})
