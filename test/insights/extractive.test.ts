/**
 * The extractive provider with the real MiniLM weights, on transcripts built from the manifest
 * reference texts (a08: three diarized speakers with turn times and the names they introduce).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { Embedder } from "../../search/Embedder.ts"
import { Insights as InsightsPayload } from "../../src/contract/domain/Insights.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { Insights, MIN_WORDS } from "../../services/insights/Insights.ts"
import { NotEnoughSpeech } from "../../services/insights/InsightsErrors.ts"
import { DANGLING_OPENINGS } from "../../services/insights/Stopwords.ts"
import { A08, a08Transcript, dialogueTranscript, distinctTexts, labelsOf, manifest, modelsDir, PANEL, PANEL_NAMES, textsTranscript } from "./transcripts.ts"

const embedder = Embedder.layer({ modelsDir, threads: 1 }).pipe(
  Layer.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 30_000 }))
)
const layer = Insights.layer().pipe(Layer.provide(embedder))

const squash = (s: string) => s.toLowerCase().replace(/\s+/g, " ")

/** The segment holding [start, end] (times inside one segment). */
const segmentOf = (t: Transcript, start: number, end: number) =>
  t.segments.find((s) => s.start - 0.01 <= start && end <= s.end + 0.01)

describe("Insights (extractive, real MiniLM)", () => {
  it.layer(layer)((it) => {
    it.effect("a08: summary, topics, quotes, speakers and chapters, checked for content", () =>
      Effect.gen(function*() {
        const transcript = a08Transcript()
        const insights = yield* (yield* Insights).generate(transcript)
        // The payload is what the contract says it is (it is stored and served as JSON).
        Schema.decodeUnknownSync(InsightsPayload)(JSON.parse(JSON.stringify(insights)))
        assert.deepStrictEqual(insights.providers, {
          summary: "extractive", topics: "extractive", quotes: "extractive", speakers: "extractive", chapters: "extractive"
        })
        const full = squash(transcript.text)

        // Summary: sentences of the transcript, in spoken order, timed inside their segments.
        assert.isAtLeast(insights.summary.sentences.length, 2)
        let previous = -1
        for (const s of insights.summary.sentences) {
          assert.include(full, squash(s.text))
          assert.isAbove(s.start, previous)
          previous = s.start
          const segment = segmentOf(transcript, s.start, s.end)
          assert.isDefined(segment, s.text)
          assert.include(segment!.text, s.text)
          assert.strictEqual(s.speaker, segment!.speaker)
        }
        assert.strictEqual(insights.summary.text, insights.summary.sentences.map((s) => s.text).join(" "))

        // Topics: the subject words of the interview, ranked with weights and times.
        const phrases = insights.topics.map((t) => t.phrase).join(" | ")
        for (const subject of ["erosion", "sea wall", "dune"]) assert.include(phrases, subject)
        assert.strictEqual(insights.topics[0]!.weight, 1)
        for (const t of insights.topics) {
          assert.isAtMost(t.phrase.split(" ").length, 3)
          assert.isAbove(t.weight, 0)
          assert.isAtMost(t.weight, 1)
          assert.strictEqual(t.occurrences.length, Math.min(t.count, 20))
          for (const o of t.occurrences) assert.isDefined(segmentOf(transcript, o.start, o.end), t.phrase)
        }
        const words = insights.topics.flatMap((t) => t.phrase.split(" "))
        assert.strictEqual(new Set(words).size, words.length, "no word repeated across topics")
        for (const name of ["laura", "samuel", "priya"]) assert.notInclude(words, name)

        // Quotes: verbatim, self-contained, inside their segments, attributed.
        assert.isAtLeast(insights.quotes.length, 1)
        for (const q of insights.quotes) {
          const segment = segmentOf(transcript, q.start, q.end)
          assert.isDefined(segment, q.text)
          assert.include(segment!.text, q.text)
          assert.isBelow(q.start, q.end)
          assert.strictEqual(q.speaker, segment!.speaker)
          assert.isFalse(DANGLING_OPENINGS.has(q.text.split(/[\s,]+/)[0]!.toLowerCase()), q.text)
          assert.notMatch(q.text, /\?$/)
        }

        // Speakers: three labels, named as the manifest says, talk time from the turns.
        const turns = manifest[A08]!.turns!
        const labels = labelsOf(turns)
        const expectedNames = manifest[A08]!.names!
        assert.deepStrictEqual(
          insights.speakers.map((s) => [s.label, s.name]),
          [...labels.entries()].map(([letter, label]) => [label, expectedNames[letter]!])
        )
        for (const [letter, label] of labels) {
          const mine = turns.filter((t) => t.speaker === letter)
          const speaker = insights.speakers.find((s) => s.label === label)!
          assert.approximately(speaker.talk_time, mine.reduce((a, t) => a + t.end! - t.start!, 0), 0.02)
          assert.strictEqual(speaker.turns, mine.length)
        }
        assert.approximately(insights.speakers.reduce((a, s) => a + s.share, 0), 1, 0.002)
        // Names are carried into summary and quotes.
        for (const s of [...insights.summary.sentences, ...insights.quotes]) {
          const letter = [...labels.entries()].find(([, l]) => l === s.speaker)![0]
          assert.strictEqual(s.speaker_name, expectedNames[letter])
        }

        // Chapters: in order, without overlap, covering every sentence from the first to the last.
        assert.isAtLeast(insights.chapters.length, 1)
        assert.strictEqual(insights.chapters[0]!.start, transcript.segments[0]!.start)
        assert.strictEqual(insights.chapters[insights.chapters.length - 1]!.end, transcript.segments.at(-1)!.end)
        insights.chapters.forEach((c, i) => {
          assert.isBelow(c.start, c.end)
          assert.isAbove(c.title.length, 0)
          assert.include(full, squash(c.gist))
          assert.isAtLeast(c.speakers.length, 1)
          if (i > 0) assert.isAtLeast(c.start, insights.chapters[i - 1]!.end)
        })
        // The caller Priya only speaks after the sea-wall exchange: the last chapter is hers.
        assert.include(insights.chapters.at(-1)!.speakers, "Priya")
        assert.match(insights.chapters.at(-1)!.title.toLowerCase(), /dune|grass|volunteer/)
      }))

    it.effect("the panel: speakers named from how they address each other, with confidence and evidence", () =>
      Effect.gen(function*() {
        const transcript = dialogueTranscript(PANEL)
        const insights = yield* (yield* Insights).generate(transcript)
        Schema.decodeUnknownSync(InsightsPayload)(JSON.parse(JSON.stringify(insights)))
        const labels = labelsOf(PANEL)
        assert.deepStrictEqual(
          insights.speakers.map((s) => [s.label, s.name]),
          [...labels].map(([letter, label]) => [label, PANEL_NAMES[letter]!])
        )
        for (const speaker of insights.speakers) {
          assert.isAbove(speaker.name_confidence!, 0)
          assert.isAtMost(speaker.name_confidence!, 1)
          assert.isAtLeast(speaker.name_evidence.length, 1)
          for (const e of speaker.name_evidence) assert.include(transcript.text, e.text)
        }
        // The names are carried into quotes and chapters; people are not topics.
        for (const q of insights.quotes) assert.strictEqual(q.speaker_name, PANEL_NAMES[[...labels].find(([, l]) => l === q.speaker)![0]])
        const words = insights.topics.flatMap((t) => t.phrase.split(" "))
        for (const name of ["martin", "emma", "clarke", "tom"]) assert.notInclude(words, name)
      }))

    it.effect("without diarization: no speakers, no names, null speaker everywhere", () =>
      Effect.gen(function*() {
        const insights = yield* (yield* Insights).generate(a08Transcript({ diarized: false }))
        assert.deepStrictEqual(insights.speakers, [])
        for (const s of [...insights.summary.sentences, ...insights.quotes]) {
          assert.isNull(s.speaker)
          assert.isNull(s.speaker_name)
        }
        for (const c of insights.chapters) assert.deepStrictEqual(c.speakers, [])
      }))

    it.effect("word times are used when the transcript carries them", () =>
      Effect.gen(function*() {
        const transcript = a08Transcript({ words: true })
        const insights = yield* (yield* Insights).generate(transcript)
        const starts = new Set(transcript.segments.flatMap((s) => s.words!.map((w) => Math.round(w.start * 100) / 100)))
        for (const s of [...insights.summary.sentences, ...insights.quotes]) assert.isTrue(starts.has(s.start), s.text)
      }))

    it.effect("single-speaker clips concatenated: sentences come from the texts, chapters in order", () =>
      Effect.gen(function*() {
        const texts = distinctTexts()
        const transcript = textsTranscript([...texts, ...texts])
        const insights = yield* (yield* Insights).generate(transcript)
        const full = squash(transcript.text)
        for (const s of insights.summary.sentences) assert.include(full, squash(s.text))
        assert.isAtLeast(insights.topics.length, 5)
        for (let i = 1; i < insights.chapters.length; i++) {
          assert.isAtLeast(insights.chapters[i]!.start, insights.chapters[i - 1]!.end)
        }
      }))

    it.effect("short recordings (1–3 sentences) get insights sized to them", () =>
      Effect.gen(function*() {
        const insights = yield* Insights
        const a01 = manifest["a01_slt_budget.wav"]!.text
        const cases = [
          // a01: one voice memo of two sentences (21 words).
          { texts: [a01], sentences: 2 },
          { texts: ["The new hiring plan for the support team starts in March."], sentences: 1 },
          { texts: [a01, "Please bring the spending figures for the last three months."], sentences: 3 },
          { texts: ["Call me back."], sentences: 1 }
        ]
        for (const { texts, sentences } of cases) {
          const transcript = textsTranscript(texts)
          const short = yield* insights.generate(transcript)
          Schema.decodeUnknownSync(InsightsPayload)(JSON.parse(JSON.stringify(short)))
          const full = squash(transcript.text)
          // The summary is the recording's own sentences, each once, in spoken order.
          assert.strictEqual(short.summary.sentences.length, sentences, texts.join(" "))
          assert.strictEqual(squash(short.summary.text), full)
          // A few topics, each said, none repeated; never more than one per 8 words (at least one).
          const words = full.split(" ").length
          assert.isAtMost(short.topics.length, Math.max(1, Math.round(words / 8)))
          assert.strictEqual(new Set(short.topics.map((t) => t.phrase)).size, short.topics.length)
          for (const t of short.topics) {
            assert.include(full, t.phrase)
            assert.isAtLeast(t.count, 1)
          }
          // Quotes only out of quotable sentences; one chapter spanning the recording.
          for (const q of short.quotes) {
            assert.include(full, squash(q.text))
            assert.isAtLeast(q.text.split(" ").length, 6)
          }
          assert.strictEqual(short.chapters.length, 1)
          assert.strictEqual(short.chapters[0]!.start, transcript.segments[0]!.start)
          assert.isAbove(short.chapters[0]!.title.length, 0)
          assert.include(full, squash(short.chapters[0]!.gist))
        }
        // a01: the budget is a topic; its second sentence is the quote.
        const memo = yield* insights.generate(textsTranscript([a01]))
        assert.isAtLeast(memo.topics.length, 2)
        assert.match(memo.topics.map((t) => t.phrase).join(" | "), /budget/)
        assert.deepStrictEqual(memo.quotes.map((q) => q.text), [a01.slice(a01.indexOf("Today"))])
        // Fillers are not summary: the memo's summary is what it says.
        const fillers = yield* insights.generate(textsTranscript(["Okay. Um. Call me back about the budget."]))
        assert.strictEqual(fillers.summary.text, "Call me back about the budget.")
        // Three words of which none is a content word: a summary, no topics, no quote.
        const bare = yield* insights.generate(textsTranscript(["Yes, thank you."]))
        assert.strictEqual(bare.summary.text, "Yes, thank you.")
        assert.deepStrictEqual([bare.topics, bare.quotes], [[], []])
      }))

    it.effect(`NotEnoughSpeech only for next to no speech: under ${MIN_WORDS} words, empty, or no speech detected`, () =>
      Effect.gen(function*() {
        const insights = yield* Insights
        assert.strictEqual(MIN_WORDS, 3)
        const two = yield* insights.generate(textsTranscript(["Yes, okay."])).pipe(Effect.flip)
        assert.deepStrictEqual(two, new NotEnoughSpeech({ words: 2, minimum: 3 }))
        const empty = yield* insights.generate(textsTranscript([])).pipe(Effect.flip)
        assert.deepStrictEqual(empty, new NotEnoughSpeech({ words: 0, minimum: 3 }))
        const undetected = yield* insights.generate({ ...textsTranscript(["Thanks for watching the video."]), speech_detected: false })
          .pipe(Effect.flip)
        assert.deepStrictEqual(undetected, new NotEnoughSpeech({ words: 0, minimum: 3 }))
      }))
  })

  it.effect("an embedding failure is InsightsUnavailable (retryable), not a payload", () =>
    Effect.gen(function*() {
      const broken = Layer.succeed(Embedder, Embedder.of({ embed: () => Effect.die(new Error("onnx session lost")) }))
      const error = yield* Effect.gen(function*() {
        return yield* (yield* Insights).generate(a08Transcript())
      }).pipe(Effect.provide(Insights.layer().pipe(Layer.provide(broken))), Effect.flip)
      if (error._tag !== "InsightsUnavailable") return assert.fail(`expected InsightsUnavailable, got ${error._tag}`)
      assert.isTrue(error.retryable)
      assert.include(error.reason, "onnx session lost")
    }))
})
