import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Segment, Transcript, Word } from "../../src/contract/domain/Transcript.ts"
import { segmentPhrases } from "../../pipeline/SegmentPhrases.ts"
import { clockLabel, timecode } from "../../services/formats/Timecode.ts"
import { TranscriptFormats } from "../../services/TranscriptFormats.ts"
import { unzip, wordRunsText } from "../support/docx.ts"

/** Words with Whisper-style leading spaces, evenly spread over [start, end) with `gapAfter` pauses. */
const wordsOf = (text: string, start: number, end: number, pauses: Record<number, number> = {}): Array<Word> => {
  const tokens = text.split(" ")
  const totalPause = Object.values(pauses).reduce((a, b) => a + b, 0)
  const step = (end - start - totalPause) / tokens.length
  const out: Array<Word> = []
  let t = start
  tokens.forEach((token, i) => {
    out.push({ start: t, end: t + step * 0.9, text: ` ${token}` })
    t += step + (pauses[i] ?? 0)
  })
  return out
}

const sentence = (k: number) => `Sentence number ${k} talks about the budget, the plan and the team.`
const longText = Array.from({ length: 12 }, (_, k) => sentence(k + 1)).join(" ")

const transcript: Transcript = {
  text: "",
  language: "en",
  duration: 3725.5,
  speech_detected: true,
  segments: [
    { start: 0.5, end: 3.25, text: " Good morning everyone.", speaker: "SPEAKER_00" },
    {
      start: 3.9,
      end: 12,
      text: " Today we review the budget. Then we hire.",
      speaker: "SPEAKER_01",
      words: wordsOf("Today we review the budget. Then we hire.", 3.9, 12, { 4: 2.5 })
    },
    // 75 s of continuous speech with word timings: must be re-split into cues ≤ 30 s.
    { start: 20, end: 95, text: longText, speaker: null, words: wordsOf(longText, 20, 95) },
    // 64 s without word timings: split by sentences over interpolated time.
    { start: 100, end: 164, text: longText, speaker: null },
    { start: 3600, end: 3601.2, text: "Late & <loud> words", speaker: null },
    { start: 3602, end: 3603, text: "   ", speaker: null }
  ]
}
const withText: Transcript = { ...transcript, text: transcript.segments.map((s) => s.text.trim()).join(" ") }

interface ParsedCue {
  readonly start: number
  readonly end: number
  readonly text: string
}

const seconds = (h: string, m: string, s: string, ms: string) => Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(ms) / 1000

const parseSrt = (srt: string): Array<ParsedCue & { n: number }> => {
  assert.isFalse(srt.includes("\r"))
  return srt.trimEnd().split("\n\n").map((block) => {
    const [n, times, ...text] = block.split("\n")
    const m = /^(\d{2}):(\d{2}):(\d{2}),(\d{3}) --> (\d{2}):(\d{2}):(\d{2}),(\d{3})$/.exec(times ?? "")
    assert.isNotNull(m, `SRT time line: ${times}`)
    assert.isAbove(text.length, 0)
    return {
      n: Number(n),
      start: seconds(m![1]!, m![2]!, m![3]!, m![4]!),
      end: seconds(m![5]!, m![6]!, m![7]!, m![8]!),
      text: text.join("\n")
    }
  })
}

const parseVtt = (vtt: string): Array<ParsedCue> => {
  const [header, ...blocks] = vtt.trimEnd().split("\n\n")
  assert.strictEqual(header, "WEBVTT")
  return blocks.map((block) => {
    const [times, ...text] = block.split("\n")
    const m = /^(\d{2}):(\d{2}):(\d{2})\.(\d{3}) --> (\d{2}):(\d{2}):(\d{2})\.(\d{3})$/.exec(times ?? "")
    assert.isNotNull(m, `VTT time line: ${times}`)
    return { start: seconds(m![1]!, m![2]!, m![3]!, m![4]!), end: seconds(m![5]!, m![6]!, m![7]!, m![8]!), text: text.join("\n") }
  })
}

const checkCues = (cues: ReadonlyArray<ParsedCue>) => {
  let previousStart = -1
  for (const c of cues) {
    assert.isAtLeast(c.start, previousStart, "cue starts are monotonic")
    assert.isAtLeast(c.end, c.start, "cue ends after it starts")
    assert.isAtMost(c.end - c.start, 30.001, "cue ≤ 30 s")
    previousStart = c.start
  }
}

const words = (text: string) => text.replace(/<[^>]+>/g, "").split(/\s+/).filter((w) => w.length > 0)

describe("Timecode", () => {
  it("formats SRT and VTT times, rounding once to the millisecond", () => {
    assert.strictEqual(timecode(0, ","), "00:00:00,000")
    assert.strictEqual(timecode(3725.5, ","), "01:02:05,500")
    assert.strictEqual(timecode(3725.5, "."), "01:02:05.500")
    assert.strictEqual(timecode(1.9996, ","), "00:00:02,000")
    assert.strictEqual(timecode(59.9994, "."), "00:00:59.999")
    assert.strictEqual(timecode(-1, ","), "00:00:00,000")
    assert.strictEqual(timecode(100 * 3600, ","), "100:00:00,000")
    assert.strictEqual(clockLabel(65.9), "01:05")
    assert.strictEqual(clockLabel(3725.5), "01:02:05")
  })
})

describe("segmentPhrases", () => {
  it("keeps a short pause-free segment as the same value", () => {
    const s = transcript.segments[0]!
    assert.strictEqual(segmentPhrases([s])[0], s)
  })

  it("splits at a pause between words (≥ 1 s), keeping the words with their phrase", () => {
    const phrases = segmentPhrases([transcript.segments[1]!])
    assert.strictEqual(phrases.length, 2)
    assert.strictEqual(phrases[0]!.text, "Today we review the budget.")
    assert.strictEqual(phrases[1]!.text, "Then we hire.")
    assert.strictEqual(phrases[0]!.speaker, "SPEAKER_01")
    assert.strictEqual(phrases[0]!.words!.length, 5)
    assert.isBelow(phrases[0]!.end, phrases[1]!.start)
  })

  it("cuts a 75 s passage with words into cues ≤ 30 s, at sentence ends", () => {
    const phrases = segmentPhrases([transcript.segments[2]!])
    assert.isAtLeast(phrases.length, 3)
    for (const p of phrases) {
      assert.isAtMost(p.end - p.start, 30)
      assert.match(p.text, /\.$/, "cut after a sentence end")
      assert.match(p.text, /^Sentence number/)
    }
    assert.strictEqual(phrases.map((p) => p.text).join(" "), longText)
    assert.strictEqual(phrases[0]!.start, 20)
  })

  it("without words (or after a text correction) splits by sentences over the segment's timing", () => {
    const segment: Segment = transcript.segments[3]!
    const corrected: Segment = { ...transcript.segments[2]!, text: longText.replace("budget", "BUDGET") }
    for (const s of [segment, corrected]) {
      const phrases = segmentPhrases([s])
      assert.isAtLeast(phrases.length, 3)
      assert.approximately(phrases[0]!.start, s.start, 1e-9)
      assert.approximately(phrases[phrases.length - 1]!.end, s.end, 1e-9)
      for (let i = 0; i < phrases.length; i++) {
        assert.isAtMost(phrases[i]!.end - phrases[i]!.start, 30 + 1e-9)
        if (i > 0) assert.approximately(phrases[i]!.start, phrases[i - 1]!.end, 1e-9)
        assert.match(phrases[i]!.text, /\.$/)
        assert.isUndefined(phrases[i]!.words)
      }
      assert.strictEqual(phrases.map((p) => p.text).join(" "), s.text)
    }
  })

  it("a single over-long sentence without punctuation is cut between words", () => {
    const text = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ")
    const phrases = segmentPhrases([{ start: 0, end: 70, text, speaker: null }])
    assert.isAtLeast(phrases.length, 3)
    for (const p of phrases) assert.isAtMost(p.end - p.start, 30 + 1e-9)
    assert.strictEqual(phrases.map((p) => p.text).join(" "), text)
  })
})

describe("TranscriptFormats", () => {
  it.layer(TranscriptFormats.layer)((it) => {
    const render = (format: "json" | "txt" | "srt" | "vtt" | "docx", t: Transcript = withText) =>
      Effect.gen(function*() {
        const formats = yield* TranscriptFormats
        return yield* formats.render(t, format, { filename: "meeting.m4a", createdAt: 1_767_225_600 })
      })
    const text = (body: Uint8Array) => new TextDecoder().decode(body)

    it.effect("srt: numbered cues, comma times, monotonic, ≤ 30 s, every word kept, speakers first", () =>
      Effect.gen(function*() {
        const out = yield* render("srt")
        assert.strictEqual(out.contentType, "application/x-subrip")
        const srt = text(out.body)
        assert.notMatch(srt, /\d{2}:\d{2}:\d{2}\.\d{3}/)
        const cues = parseSrt(srt)
        cues.forEach((c, i) => assert.strictEqual(c.n, i + 1))
        checkCues(cues)
        assert.strictEqual(cues[0]!.start, 0.5)
        assert.strictEqual(cues[0]!.end, 3.25)
        assert.strictEqual(cues[0]!.text, "SPEAKER_00: Good morning everyone.")
        assert.isTrue(cues.some((c) => c.text.startsWith("SPEAKER_01: ")))
        const last = cues[cues.length - 1]!
        assert.strictEqual(last.start, 3600)
        assert.strictEqual(last.text, "Late & <loud> words") // no speaker, no label
        const spoken = cues.map((c) => c.text.replace(/^SPEAKER_\d+: /, "")).join(" ")
        assert.deepStrictEqual(words(spoken), words(withText.segments.map((s) => s.text).join(" ")))
      }))

    it.effect("vtt: WEBVTT header, period times, voice spans for speakers, escaped text", () =>
      Effect.gen(function*() {
        const out = yield* render("vtt")
        assert.strictEqual(out.contentType, "text/vtt")
        const vtt = text(out.body)
        assert.isTrue(vtt.startsWith("WEBVTT\n\n"))
        assert.notMatch(vtt, /\d{2}:\d{2}:\d{2},\d{3}/)
        const cues = parseVtt(vtt)
        checkCues(cues)
        assert.strictEqual(cues[0]!.text, "<v SPEAKER_00>Good morning everyone.")
        assert.strictEqual(cues[cues.length - 1]!.text, "Late &amp; &lt;loud&gt; words")
        assert.strictEqual(cues.length, parseSrt(text((yield* render("srt")).body)).length)
      }))

    it.effect("txt: one segment per line, speaker first when diarized, empty segments skipped", () =>
      Effect.gen(function*() {
        const out = yield* render("txt")
        assert.strictEqual(out.contentType, "text/plain; charset=utf-8")
        const lines = text(out.body).split("\n")
        assert.strictEqual(lines[lines.length - 1], "")
        assert.deepStrictEqual(lines.slice(0, -1), [
          "SPEAKER_00: Good morning everyone.",
          "SPEAKER_01: Today we review the budget. Then we hire.",
          longText,
          longText,
          "Late & <loud> words"
        ])
      }))

    it.effect("json: the transcript itself; words only where stored", () =>
      Effect.gen(function*() {
        const out = yield* render("json")
        assert.strictEqual(out.contentType, "application/json")
        const parsed = JSON.parse(text(out.body))
        assert.deepStrictEqual(parsed, JSON.parse(JSON.stringify(withText)))
        assert.isFalse("words" in parsed.segments[0])
        assert.isTrue("words" in parsed.segments[1])
        const extra = { ...withText, internal: "x" } as Transcript
        assert.isFalse("internal" in JSON.parse(text((yield* render("json", extra)).body)))
      }))

    it.effect("docx: a valid zip whose word/document.xml holds title, metadata and every segment", () =>
      Effect.gen(function*() {
        const out = yield* render("docx")
        assert.strictEqual(out.contentType, "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
        assert.strictEqual(out.extension, "docx")
        assert.deepStrictEqual([...out.body.subarray(0, 4)], [0x50, 0x4b, 0x03, 0x04])
        const files = unzip(out.body)
        assert.isTrue(files.has("[Content_Types].xml"))
        const xml = files.get("word/document.xml")!.toString("utf8")
        const body = wordRunsText(xml)
        assert.include(body, "meeting.m4a")
        assert.include(body, "Language: en")
        assert.include(body, "Duration: 01:02:05")
        assert.include(body, "Created: 2026-01-01 00:00 UTC")
        for (const s of withText.segments) if (s.text.trim()) assert.include(body, s.text.trim())
        assert.include(body, "[00:03] SPEAKER_01: Today we review the budget.")
        assert.include(body, "[01:00:00] Late & <loud> words")
      }))

    it.effect("an empty (no speech) transcript renders everywhere", () =>
      Effect.gen(function*() {
        const empty: Transcript = { text: "", language: null, duration: 8, speech_detected: false, segments: [] }
        assert.strictEqual(text((yield* render("srt", empty)).body), "")
        assert.strictEqual(text((yield* render("vtt", empty)).body), "WEBVTT\n")
        assert.strictEqual(text((yield* render("txt", empty)).body), "")
        const docx = unzip((yield* render("docx", empty)).body)
        assert.include(wordRunsText(docx.get("word/document.xml")!.toString("utf8")), "No speech detected.")
      }))
  })
})
