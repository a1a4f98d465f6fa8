/**
 * Caption timing and the ASS script: estimated word times stay inside their phrase and
 * follow character counts; words are clipped to the clip and shifted to its start; cues
 * split at sentence ends, long gaps and the line budget; karaoke durations come from word
 * starts; ASS syntax in spoken text cannot inject override tags; the reframing rule.
 */
import { describe, expect, it } from "vitest"
import { captionScript, groupCues } from "../../pipeline/render/CaptionScript.ts"
import { reframing, sourceStreams } from "../../pipeline/render/RenderPlan.ts"
import { clipWords, estimatedWords } from "../../services/clips/ClipWords.ts"

const segment = (start: number, end: number, text: string) => ({ start, end, text, speaker: null })

describe("word times", () => {
  it("shares a segment's span by characters, inside the segment", () => {
    const words = estimatedWords(segment(10, 13, "a bbbb cc"))
    expect(words.map((w) => w.text)).toEqual(["a", "bbbb", "cc"])
    expect(words[0]!.start).toBe(10)
    // Weights 2, 5, 3 of 10 over 3 s.
    expect(words[1]!.start).toBeCloseTo(10.6, 6)
    expect(words[2]!.start).toBeCloseTo(12.1, 6)
    expect(words[2]!.end).toBeLessThanOrEqual(13)
    for (const word of words) expect(word.end).toBeGreaterThan(word.start)
  })

  it("prefers stored word times, clips to the window and shifts to the clip start", () => {
    const transcript = {
      text: "",
      language: "en",
      duration: 30,
      speech_detected: true,
      segments: [
        { ...segment(0, 5.5, "before the clip"), words: [{ start: 0, end: 1, text: "before" }, { start: 3, end: 5.5, text: "late" }] },
        segment(6, 8, "inside words"),
        segment(20, 22, "after")
      ]
    }
    const words = clipWords(transcript, 5, 10)
    expect(words.map((w) => w.text)).toEqual(["late", "inside", "words"])
    expect(words[0]).toEqual({ start: 0, end: 0.5, text: "late" })
    expect(words[1]!.start).toBeCloseTo(1, 6)
  })
})

describe("the ASS script", () => {
  it("splits cues at sentence ends, long gaps and the line budget", () => {
    const cues = groupCues([
      { start: 0, end: 0.4, text: "Hi." },
      { start: 0.5, end: 0.9, text: "Then" },
      { start: 2.5, end: 2.9, text: "later" },
      ...Array.from({ length: 8 }, (_, i) => ({ start: 3 + i * 0.3, end: 3.2 + i * 0.3, text: "wordy" }))
    ])
    expect(cues.map((cue) => cue.map((w) => w.text).join(" "))).toEqual([
      "Hi.",
      "Then",
      "later wordy wordy wordy wordy",
      "wordy wordy wordy wordy"
    ])
  })

  it("karaoke: one \\k per word in centiseconds to the next word; line: plain text", () => {
    const words = [{ start: 0.5, end: 0.9, text: "Hello" }, { start: 1.2, end: 1.6, text: "there." }]
    const karaoke = captionScript({ style: "karaoke", words, durationSeconds: 3 })
    expect(karaoke).toContain("Dialogue: 1,0:00:00.50,0:00:02.00,Caption,,0,0,0,,{\\k70}Hello {\\k40}there.")
    const line = captionScript({ style: "line", words, durationSeconds: 3 })
    expect(line).toContain(",Caption,,0,0,0,,Hello there.")
    expect(captionScript({ style: "none", words, durationSeconds: 3 })).not.toContain("Caption,,")
  })

  it("keeps ASS syntax out of spoken text and titles", () => {
    const script = captionScript({
      style: "line",
      words: [{ start: 0, end: 1, text: "{\\pos(0,0)}evil\\N" }],
      durationSeconds: 2,
      title: "My {\\b0} show"
    })
    const events = script.split("[Events]")[1]!
    expect(events).not.toMatch(/[{}]/)
    expect(events).not.toContain("\\")
    expect(events).toContain("Title,,0,0,0,,My /b0 show")
  })
})

describe("reframing", () => {
  it("crops square and portrait sources, fills landscape ones; cover art is not video", () => {
    expect(reframing(9 / 16)).toBe("crop")
    expect(reframing(1)).toBe("crop")
    expect(reframing(16 / 9)).toBe("blurred-fill")
    const art = sourceStreams(JSON.stringify({
      streams: [{ codec_type: "audio" }, { codec_type: "video", width: 600, height: 600, disposition: { attached_pic: 1 } }]
    }))
    expect(art).toEqual({ hasAudio: true, video: undefined })
    const anamorphic = sourceStreams(JSON.stringify({
      streams: [{ codec_type: "video", width: 720, height: 576, sample_aspect_ratio: "64:45", avg_frame_rate: "25/1" }]
    }))
    expect(anamorphic.video!.aspect).toBeCloseTo(16 / 9, 2)
    expect(anamorphic.video!.fps).toBe(25)
  })
})
