/**
 * Speaker names from how people address each other (`SpeakerNames.ts`), on diarized transcript
 * fixtures: the panel of `transcripts.ts` (self-introduction, a guest introduced before she
 * speaks, greetings, direct address of a voice never introduced), and the cases that must name
 * nobody or must not name the wrong speaker.
 */
import { describe, expect, it } from "vitest"
import { splitSentences } from "../../services/insights/Sentences.ts"
import { identifySpeakers, MIN_SUPPORT } from "../../services/insights/SpeakerNames.ts"
import { dialogueTranscript, labelsOf, PANEL, PANEL_NAMES } from "./transcripts.ts"

type Turn = { speaker: string; text: string }
const turns = (...ts: Array<[string, string]>): Array<Turn> => ts.map(([speaker, text]) => ({ speaker, text }))

/** Speaker letter → identity (letters as in the turns). */
const identify = (ts: ReadonlyArray<Turn>) => {
  const labels = labelsOf(ts)
  const found = identifySpeakers(splitSentences(dialogueTranscript(ts).segments))
  return new Map([...labels].flatMap(([letter, label]) => {
    const identity = found.get(label)
    return identity === undefined ? [] : [[letter, identity] as const]
  }))
}
const namesOf = (ts: ReadonlyArray<Turn>) => Object.fromEntries([...identify(ts)].map(([letter, i]) => [letter, i.name]))

describe("speaker names from address", () => {
  it("the panel: Martin Hale (self), Emma Clarke (introduced, greets, addressed), Tom (addressed, answers)", () => {
    const found = identify(PANEL)
    expect(Object.fromEntries([...found].map(([letter, i]) => [letter, i.name]))).toEqual(PANEL_NAMES)
    const transcript = dialogueTranscript(PANEL)
    const startOf = (text: string) => splitSentences(transcript.segments).find((s) => s.text.includes(text))!.start

    const martin = found.get("A")!
    expect(martin.evidence.map((e) => e.kind)).toEqual(["self_introduction", "greeting"])
    expect(martin.evidence[0]!.text).toContain("I'm Martin Hale")
    expect(martin.evidence[1]).toEqual({ kind: "greeting", start: Math.round(startOf("Hello Martin") * 100) / 100, text: "Hello Martin, and hello to everyone listening." })

    const emma = found.get("B")!
    expect(emma.evidence.map((e) => e.kind)).toEqual(["introduced", "addressed", "addressed"])
    expect(emma.evidence.map((e) => e.text)).toEqual([
      "I'm Martin Hale, and tonight I'm joined by Doctor Emma Clarke, who studies sleep at the university.",
      "Emma, can you tell us why night workers sleep so badly during the day?",
      "Emma, is there anything hotels could do better?"
    ])
    const tom = found.get("C")!
    expect(tom.evidence.map((e) => [e.kind, e.text])).toEqual([
      ["addressed", "Tom, do guests ever complain?"],
      ["greeting", "Thanks, Tom."]
    ])
    // Evidence is timed and in spoken order; confidence grows with the cues behind a name.
    for (const identity of found.values()) {
      const starts = identity.evidence.map((e) => e.start)
      expect(starts).toEqual([...starts].sort((a, b) => a - b))
      expect(identity.confidence).toBeGreaterThan(0)
      expect(identity.confidence).toBeLessThanOrEqual(1)
    }
    expect(emma.confidence).toBeGreaterThan(tom.confidence)
    expect(martin.confidence).toBeGreaterThan(tom.confidence)
  })

  it("a name mentioned in passing, or 'hello everyone', names nobody", () => {
    expect(namesOf(turns(
      ["A", "I read Emma's book last week. Have you read Emma's book?"],
      ["B", "Not yet. Is it about Emma's years in Denmark?"],
      ["A", "Partly. Emma's research is the heart of it."]
    ))).toEqual({})
    expect(namesOf(turns(
      ["A", "Hello everyone, and welcome to the show."],
      ["B", "Hello Everyone. Good to be here."],
      ["A", "Everyone, please take your seats."]
    ))).toEqual({})
  })

  it("greetings and replies by name add up for the previous speaker", () => {
    const found = identify(turns(
      ["A", "Sea walls push the erosion further down the beach."],
      ["B", "Laura, that is the hard part. Who pays for it?"],
      ["A", "The towns do."],
      ["C", "Thanks for having me, Laura. I run the dune volunteers."]
    ))
    expect(found.get("A")?.name).toBe("Laura")
    expect(found.get("A")!.evidence.map((e) => e.kind)).toEqual(["greeting", "greeting"])
    expect([...found.keys()]).toEqual(["A"])
  })

  it("an address whose comma the recogniser dropped counts only for a name another cue says", () => {
    // As whisper-tiny.en heard the panel recording: "Tom," lost its comma and its question mark.
    const heard = turns(
      ["A", "We have a night porter from the city hotel in the studio to Tom do your guests ever complain"],
      ["C", "all the time"],
      ["A", "Thanks Tom. Is there anything hotels could do better?"],
      ["B", "Darker rooms would help."]
    )
    const found = identify(heard)
    expect(found.get("C")?.name).toBe("Tom")
    expect(found.get("C")!.evidence.map((e) => e.kind)).toEqual(["addressed", "greeting"])
    expect([...found.keys()]).toEqual(["C"])
    // Without the greeting nothing else says "Tom": no name. Nor for "Emma is right" (not an address).
    expect(namesOf(heard.filter((t) => !t.text.startsWith("Thanks")))).toEqual({})
    expect(namesOf(turns(
      ["A", "I'm Martin. I think Emma is right about that"],
      ["B", "Thanks Emma. I agree"],
      ["C", "So do I."]
    ))).toEqual({ A: "Martin" })
  })

  it("one greeting alone is too weak to name anybody", () => {
    expect(MIN_SUPPORT).toBeGreaterThan(1)
    expect(namesOf(turns(
      ["A", "So that is the plan for the spring."],
      ["B", "Thanks, Emma. That helps a lot."]
    ))).toEqual({})
  })

  it("'Thanks, Emma' after a voice that is not Emma's does not move the name", () => {
    const found = namesOf(turns(
      ["A", "I'm Martin Hale, and I'm joined by Doctor Emma Clarke."],
      ["B", "Hello Martin."],
      ["A", "Emma, what keeps night workers awake?"],
      ["B", "Mostly daylight and noise."],
      ["A", "Interesting. We also have a caller."],
      ["C", "Thanks, Emma, that was useful. I work nights myself."]
    ))
    expect(found).toEqual({ A: "Martin Hale", B: "Emma Clarke" })
  })

  it("one name voted for two speakers with equal weight, or two names for one speaker, names neither", () => {
    // "Tom" is asked twice and two different voices answer.
    expect(namesOf(turns(
      ["A", "I'm Martin Hale. Tom, what do you think?"],
      ["B", "I think it works."],
      ["A", "And what about you, Tom?"],
      ["C", "I disagree."]
    ))).toEqual({ A: "Martin Hale" })
    // One voice answers to "Tom" and to "Sam".
    expect(namesOf(turns(
      ["A", "Tom, any thoughts?"],
      ["B", "A few."],
      ["A", "Sam, any thoughts?"],
      ["B", "None."]
    ))).toEqual({})
  })

  it("conflicts are resolved by weight: a self-introduction beats a stray greeting", () => {
    // B says "Hi Sam" to A, who introduced himself as Martin: Martin wins, with a lower confidence than unopposed.
    const opposed = identify(turns(["A", "I'm Martin, good to see you."], ["B", "Hi Sam, good to see you too."]))
    const unopposed = identify(turns(["A", "I'm Martin, good to see you."], ["B", "Good to see you too."]))
    expect(opposed.get("A")?.name).toBe("Martin")
    expect(opposed.get("A")!.confidence).toBeLessThan(unopposed.get("A")!.confidence)
    expect(opposed.has("B")).toBe(false)
  })

  it("an introduced guest is the next new voice; 'Doctor Clarke' and 'Emma' count for Emma Clarke", () => {
    const found = identify(turns(
      ["A", "With me today is Professor Emma Clarke."],
      ["B", "Good evening."],
      ["A", "Doctor Clarke, where do we start?"],
      ["B", "With the body clock."]
    ))
    expect(found.get("B")?.name).toBe("Emma Clarke")
    expect(found.get("B")!.evidence.map((e) => e.kind)).toEqual(["introduced", "addressed"])
    expect(found.has("A")).toBe(false)
  })

  it("an address is a question even when the recogniser ends it with a full stop", () => {
    expect(namesOf(turns(["A", "Priya, what does your group do."], ["B", "We plant dune grass."]))).toEqual({ B: "Priya" })
    expect(namesOf(turns(["A", "Tom, tell us about the night bus."], ["B", "It is quiet."]))).toEqual({ B: "Tom" })
  })

  it("words that follow the cues without being names name nobody", () => {
    expect(namesOf(turns(
      ["A", "I'm Canadian, so the cold never bothers me."],
      ["B", "It's Tuesday. Okay, what is next?"],
      ["A", "Folks, can you hear me?"],
      ["B", "Yes. Paris, what a city! Denmark, how lovely."],
      ["A", "Indeed."]
    ))).toEqual({})
  })
})
