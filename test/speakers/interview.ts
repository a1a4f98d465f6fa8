/** A stored, diarized transcript for the speaker-name and chat tests, and how to put it in place. */
import { Effect } from "effect"
import { TranscriptStore } from "../../services/jobs/TranscriptStore.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import type { TestServer } from "../support/server.ts"

const segments = [
  { start: 0, end: 5, text: "Welcome back to the coastal show. I'm Martin Hale, and today we talk about lighthouses and storms.", speaker: "SPEAKER_00" },
  { start: 5, end: 9, text: "My guest keeps the old red tower on the cliff. Welcome, Emma.", speaker: "SPEAKER_00" },
  { start: 9, end: 15, text: "Thank you, Martin. I repaint the lighthouse every spring before the winter storms arrive.", speaker: "SPEAKER_01" },
  { start: 15, end: 20, text: "How many fishing boats pass the harbour at dawn?", speaker: "SPEAKER_00" },
  { start: 20, end: 27, text: "About forty fishing boats pass the harbour every morning at dawn.", speaker: "SPEAKER_01" }
]

/** Two voices; the host introduces himself (Martin Hale) and greets "Emma", so insights can detect both names. */
export const interview: Transcript = {
  text: segments.map((s) => s.text).join(" "),
  language: "en",
  duration: 30,
  speech_detected: true,
  segments
}

/** Replaces a finished job's transcript as a correction does (a `changed` event: re-indexed, insights made anew). */
export const saveTranscript = (server: TestServer, jobId: string, transcript: Transcript) =>
  server.run(Effect.gen(function*() {
    const store = yield* TranscriptStore
    yield* store.save(JobId.make(jobId), transcript)
  }))
