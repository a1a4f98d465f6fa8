import { assert, describe, it } from "vitest"
import type { Segment, Transcript } from "../../src/contract/domain/Transcript.ts"
import { assignSpeakers, speakerOf } from "../../pipeline/diarize/AssignSpeakers.ts"
import { averageLinkage } from "../../pipeline/diarize/Clustering.ts"
import { clusterEmbeddings } from "../../pipeline/diarize/Diarizer.ts"
import { labelTurns, planWindows, type SpeakerTurn, toSampleRegions } from "../../pipeline/diarize/SpeechWindows.ts"
import { diarizationErrorRate } from "../support/der.ts"

const turns: Array<SpeakerTurn> = [
  { speaker: "SPEAKER_00", start: 0.2, end: 5 },
  { speaker: "SPEAKER_01", start: 5.6, end: 9 },
  { speaker: "SPEAKER_00", start: 9.5, end: 12 }
]

const transcript = (segments: Array<Segment>): Transcript => ({
  text: segments.map((s) => s.text).join(" "),
  language: "en",
  duration: 12,
  speech_detected: true,
  segments
})

const w = (text: string, start: number, end: number) => ({ text, start, end })

describe("assignSpeakers", () => {
  it("labels whole segments by their speaker and leaves the rest of the transcript alone", () => {
    const input = transcript([
      { start: 0.2, end: 4.9, text: "Hello there.", speaker: null },
      { start: 5.7, end: 8.8, text: "Hi.", speaker: null }
    ])
    const out = assignSpeakers(input, turns)
    assert.deepStrictEqual(out.segments.map((s) => s.speaker), ["SPEAKER_00", "SPEAKER_01"])
    assert.strictEqual(out.text, input.text)
    assert.strictEqual(out.duration, 12)
  })

  it("splits a segment that spans a change of speaker at the change, using word times", () => {
    const segment: Segment = {
      start: 3.9,
      end: 7,
      text: "Yes, I agree. Me too.",
      speaker: null,
      words: [w(" Yes,", 3.9, 4.3), w(" I", 4.3, 4.5), w(" agree.", 4.5, 4.95), w(" Me", 5.7, 6.2), w(" too.", 6.2, 7)]
    }
    const out = assignSpeakers(transcript([segment]), turns)
    assert.strictEqual(out.segments.length, 2)
    const [a, b] = out.segments
    assert.deepStrictEqual([a!.start, a!.end, a!.text, a!.speaker], [3.9, 4.95, "Yes, I agree.", "SPEAKER_00"])
    assert.deepStrictEqual([b!.start, b!.end, b!.text, b!.speaker], [5.7, 7, "Me too.", "SPEAKER_01"])
    assert.deepStrictEqual(a!.words!.map((x) => x.speaker), ["SPEAKER_00", "SPEAKER_00", "SPEAKER_00"])
    assert.deepStrictEqual(b!.words!.map((x) => x.text), [" Me", " too."])
    assert.strictEqual(out.segments.map((s) => s.text).join(" "), segment.text)
  })

  it("splits into three pieces when a speaker comes back within one segment", () => {
    const segment: Segment = {
      start: 4, end: 10.5, text: "a b c", speaker: null,
      words: [w(" a", 4, 4.8), w(" b", 6, 8), w(" c", 9.6, 10.5)]
    }
    const out = assignSpeakers(transcript([segment]), turns)
    assert.deepStrictEqual(out.segments.map((s) => [s.speaker, s.text, s.start, s.end]), [
      ["SPEAKER_00", "a", 4, 4.8],
      ["SPEAKER_01", "b", 6, 8],
      ["SPEAKER_00", "c", 9.6, 10.5]
    ])
  })

  it("a word in a pause takes the nearest turn; a word across a boundary takes the larger overlap", () => {
    assert.strictEqual(speakerOf(turns, 5.1, 5.2), "SPEAKER_00")
    assert.strictEqual(speakerOf(turns, 5.45, 5.5), "SPEAKER_01")
    assert.strictEqual(speakerOf(turns, 4.8, 5.9), "SPEAKER_01")
    assert.strictEqual(speakerOf(turns, 20, 21), "SPEAKER_00")
    assert.strictEqual(speakerOf([], 1, 2), null)
    // Zero-length word inside a turn.
    assert.strictEqual(speakerOf(turns, 7, 7), "SPEAKER_01")
  })

  it("without word times a segment takes the majority overlap and is not split", () => {
    const out = assignSpeakers(transcript([{ start: 4, end: 9.2, text: "long one", speaker: null }]), turns)
    assert.deepStrictEqual(out.segments.map((s) => s.speaker), ["SPEAKER_01"])
    const tie = assignSpeakers(transcript([{ start: 3, end: 6.6, text: "x", speaker: null }]), turns)
    assert.deepStrictEqual(tie.segments.map((s) => s.speaker), ["SPEAKER_00"])
    const empty = assignSpeakers(transcript([{ start: 6, end: 7, text: "y", speaker: null, words: [] }]), turns)
    assert.deepStrictEqual(empty.segments, [{ start: 6, end: 7, text: "y", speaker: "SPEAKER_01", words: [] }])
  })

  it("an edited segment (text no longer its words) keeps its text: not split, majority speaker", () => {
    const segment: Segment = {
      start: 4, end: 8, text: "Edited text.", speaker: null,
      words: [w(" a", 4, 4.5), w(" b", 6, 8)]
    }
    const out = assignSpeakers(transcript([segment]), turns)
    assert.strictEqual(out.segments.length, 1)
    assert.strictEqual(out.segments[0]!.text, "Edited text.")
    assert.strictEqual(out.segments[0]!.speaker, "SPEAKER_01")
    assert.deepStrictEqual(out.segments[0]!.words!.map((x) => x.speaker), ["SPEAKER_00", "SPEAKER_01"])
  })

  it("no turns: same segments with null speakers; no segments: nothing to do", () => {
    const input = transcript([
      { start: 0, end: 1, text: "hi", speaker: null },
      { start: 1, end: 2, text: "a b", speaker: null, words: [w(" a", 1, 1.5), w(" b", 1.5, 2)] }
    ])
    const out = assignSpeakers(input, [])
    assert.deepStrictEqual(out.segments.map((s) => [s.text, s.speaker]), [["hi", null], ["a b", null]])
    assert.deepStrictEqual(out.segments[1]!.words!.map((x) => x.speaker), [null, null])
    assert.strictEqual(out.text, input.text)
    assert.deepStrictEqual(assignSpeakers(transcript([]), turns).segments, [])
  })

  it("words without spaces are joined with one space when split", () => {
    const segment: Segment = {
      start: 4, end: 7, text: "one two three", speaker: null,
      words: [w("one", 4, 4.5), w("two", 4.5, 4.9), w("three", 6, 7)]
    }
    const out = assignSpeakers(transcript([segment]), turns)
    assert.deepStrictEqual(out.segments.map((s) => s.text), ["one two", "three"])
  })
})

const unit = (...xs: Array<number>) => {
  const v = Float32Array.from(xs)
  const n = Math.hypot(...xs)
  return v.map((x) => x / n)
}

describe("averageLinkage", () => {
  it("finds the number of groups from the threshold, numbered by first item", () => {
    const items = [unit(1, 0, 0), unit(0, 1, 0), unit(0.95, 0.05, 0), unit(0, 0.9, 0.1), unit(0, 0, 1)]
    assert.deepStrictEqual(averageLinkage(items, 0.9), [0, 1, 0, 1, 2])
    assert.deepStrictEqual(averageLinkage(items, -1), [0, 0, 0, 0, 0])
    assert.deepStrictEqual(averageLinkage(items, 1.01), [0, 1, 2, 3, 4])
    assert.deepStrictEqual(averageLinkage([], 0.5), [])
    assert.deepStrictEqual(averageLinkage([unit(1, 1)], 0.5), [0])
    // Zero and NaN vectors neither hang the search nor join anything.
    assert.deepStrictEqual(averageLinkage([unit(1, 0), Float32Array.of(0, 0), Float32Array.of(NaN, 0), unit(1, 0.01)], 0.5), [0, 1, 2, 0])
  })

  it("uses the average over cross pairs, not the closest pair (single linkage would chain)", () => {
    // A chain a–b–c where neighbours are similar (cos 0.8) but a and c are not (cos 0.28).
    const a = unit(1, 0)
    const b = unit(Math.cos(0.6435), Math.sin(0.6435))
    const c = unit(Math.cos(1.287), Math.sin(1.287))
    // {a,b} merge at 0.8; then {a,b}–c averages (0.28 + 0.8)/2 = 0.54 < 0.7.
    assert.deepStrictEqual(averageLinkage([a, b, c], 0.7), [0, 0, 1])
    assert.deepStrictEqual(averageLinkage([a, b, c], 0.5), [0, 0, 0])
  })

  it("clusterEmbeddings: short windows join the nearest cluster; large inputs cluster a subset", () => {
    const items = [unit(1, 0.1), unit(0.1, 1), unit(1, 0.2), unit(0.6, 0.5)]
    // The unreliable 4th would stay alone at 0.95; it joins the nearer cluster instead.
    assert.deepStrictEqual(clusterEmbeddings(items, [true, true, true, false], 0.95, 100), [0, 1, 0, 0])
    assert.deepStrictEqual(averageLinkage(items, 0.95), [0, 1, 0, 2])
    const many = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? unit(1, 0.01 * i) : unit(0.01 * i, 1)))
    const labels = clusterEmbeddings(many, many.map(() => true), 0.8, 10)
    assert.deepStrictEqual(labels, many.map((_, i) => i % 2))
  })
})

describe("speech windows and turns", () => {
  const opts = { windowFrames: 150, hopFrames: 75, minFrames: 50 }

  it("plans windows inside regions: regular, end-aligned tail, one short window, none for tiny regions", () => {
    const regions = toSampleRegions([{ start: 0, end: 4 }, { start: 5, end: 5.8 }, { start: 6, end: 6.3 }], 16_000 * 10)
    const plans = planWindows(regions, opts)
    assert.deepStrictEqual(plans.map((p) => [p.region, p.firstFrame, p.frames]), [
      [0, 0, 150], [0, 75, 150], [0, 150, 150], [0, 225, 150], [0, 250, 150],
      [1, 0, 80]
    ])
    assert.deepStrictEqual(toSampleRegions([{ start: 9, end: 12 }, { start: 3, end: 3 }], 16_000 * 10), [{ start: 144_000, end: 160_000 }])
    // Unordered, overlapping and touching regions become ordered disjoint ones.
    assert.deepStrictEqual(
      toSampleRegions([{ start: 2, end: 3 }, { start: 0, end: 1 }, { start: 0.5, end: 1.5 }, { start: 3, end: 4 }], 16_000 * 10),
      [{ start: 0, end: 24_000 }, { start: 32_000, end: 64_000 }]
    )
  })

  it("labels frames by nearest window centre, merges short same-speaker pauses, names by first appearance", () => {
    const regions = toSampleRegions([{ start: 0, end: 3 }, { start: 3.5, end: 6 }, { start: 6.2, end: 6.4 }, { start: 9, end: 10 }], 16_000 * 12)
    const plans = planWindows(regions, opts)
    // Region 0 → cluster 7, region 1 → cluster 3, region 3 → cluster 7; region 2 has no window.
    const labels = plans.map((p) => (p.region === 1 ? 3 : 7))
    const out = labelTurns(regions, plans, labels, 1)
    assert.deepStrictEqual(out, [
      { speaker: "SPEAKER_00", start: 0, end: 3 },
      { speaker: "SPEAKER_01", start: 3.5, end: 6.4 },
      { speaker: "SPEAKER_00", start: 9, end: 10 }
    ])
    assert.deepStrictEqual(labelTurns(regions, [], [], 1), [])
  })

  it("a change of speaker inside one region falls midway between the differing window centres", () => {
    const regions = toSampleRegions([{ start: 0, end: 6 }], 16_000 * 6)
    const plans = planWindows(regions, opts)
    const labels = plans.map((p) => (p.centre / 16_000 < 3 ? 0 : 1))
    const out = labelTurns(regions, plans, labels, 1)
    assert.strictEqual(out.length, 2)
    assert.approximately(out[0]!.end, 3, 0.4)
    assert.strictEqual(out[1]!.start, out[0]!.end)
  })
})

describe("DER helper", () => {
  const ref = [{ speaker: "A", start: 0, end: 4 }, { speaker: "B", start: 5, end: 9 }]

  it("is 0 for a relabelled copy and counts missed, false alarm and confusion", () => {
    assert.strictEqual(diarizationErrorRate(ref, [{ speaker: "x", start: 0, end: 4 }, { speaker: "y", start: 5, end: 9 }]).der, 0)
    const r = diarizationErrorRate(ref, [{ speaker: "x", start: 0, end: 3 }, { speaker: "x", start: 4.5, end: 9 }])
    assert.strictEqual(r.total, 8)
    assert.strictEqual(r.missed, 1)
    assert.strictEqual(r.falseAlarm, 0.5)
    // x is mapped to B (4 s together, against 3 s with A), so its 3 s over A are confusion.
    assert.strictEqual(r.mapping.get("x"), "B")
    assert.strictEqual(r.confusion, 3)
    assert.approximately(r.der, 4.5 / 8, 1e-9)
  })

  it("a collar removes the frames near reference boundaries from scoring", () => {
    const hyp = [{ speaker: "x", start: 0.2, end: 4.2 }, { speaker: "y", start: 5, end: 9 }]
    assert.isAbove(diarizationErrorRate(ref, hyp).der, 0)
    assert.strictEqual(diarizationErrorRate(ref, hyp, 0.25).der, 0)
  })
})
