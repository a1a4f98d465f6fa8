/**
 * The chaining hook (JobRuns.handOff / staged / complete) on the real service's storage:
 * a transcription that hands its job on to a follow-up kind (diarization) stores the
 * transcript and the audio facts and a task of that kind, but the job stays `processing`,
 * uncharged and without a `finished` event until the follow-up completes it — then it is
 * done, charged once and announced once, and the first run's token can no longer end it.
 */
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { Billing } from "../../services/billing/Billing.ts"
import { JobRuns, type Outcome } from "../../services/jobs/JobRuns.ts"
import { JobStore } from "../../services/jobs/JobStore.ts"
import { TranscriptStore } from "../../services/jobs/TranscriptStore.ts"
import { TaskStore } from "../../services/work/TaskStore.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { JobId } from "../../src/contract/domain/Ids.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn } from "../support/standInPipeline.ts"

let server: TestServer
let accountId: AccountId

beforeAll(async () => {
  server = await startServer("work-chaining", {}, { pipeline: makeStandIn().layer })
  accountId = (await server.account(undefined, { minutes: 10 })).accountId
}, 120_000)
afterAll(async () => {
  await server?.close()
})

const outcome = (speaker: string | null): Outcome => ({
  transcript: {
    text: "Hello there.",
    language: "en",
    duration: 60,
    speech_detected: true,
    segments: [{ start: 0, end: 60, text: "Hello there.", speaker }]
  },
  audioDurationSeconds: 60,
  language: "en",
  speechDetected: true,
  speechRatio: 0.9
})

it("a handed-on job completes only through its follow-up, charged and announced once", async () => {
  const id = JobId.make(randomUUID())
  const result = await server.run(Effect.gen(function*() {
    const store = yield* JobStore
    const runs = yield* JobRuns
    const sql = yield* SqlClient.SqlClient
    const billing = yield* Billing
    const events = () => sql<{ n: number }>`SELECT count(*)::int AS n FROM job_events WHERE job_id = ${id} AND type = 'finished'`
    // Created without a dispatch: nothing else runs this job.
    yield* store.create({
      id,
      accountId,
      apiKeyId: null,
      guestClient: null,
      claimHash: null,
      source: "upload",
      inputKind: "upload",
      filename: "chained.wav",
      objectKey: null,
      sizeBytes: null,
      contentType: null,
      inputUrl: null,
      resolvedMedia: null,
      language: "auto",
      diarize: true,
      wordTimestamps: false,
      webhookUrl: null
    })
    const first = Option.getOrThrow(yield* runs.claim(id))
    const taskId = yield* runs.handOff(id, first.token, outcome(null), "diarize")
    const handedOn = {
      job: Option.getOrThrow(yield* store.get(id)),
      task: yield* (yield* TaskStore).get(Option.getOrThrow(taskId)),
      staged: yield* runs.staged(id),
      balance: yield* billing.balanceMinutes(accountId),
      events: (yield* events())[0]!.n
    }

    // The follow-up: claims the job like any run, reads what was stored, completes it.
    const second = Option.getOrThrow(yield* runs.claim(id))
    const staged = Option.getOrThrow(handedOn.staged)
    const done = yield* runs.complete(id, second.token, { ...staged, transcript: outcome("SPEAKER_00").transcript })
    const stale = yield* runs.complete(id, first.token, outcome(null))
    return {
      handedOn,
      done,
      stale,
      transcript: yield* (yield* TranscriptStore).get(id),
      balance: yield* billing.balanceMinutes(accountId),
      events: (yield* events())[0]!.n
    }
  }))

  expect(result.handedOn.job).toMatchObject({ status: "processing", audio_duration_seconds: 60, language: "en" })
  expect(Option.getOrThrow(result.handedOn.task)).toMatchObject({ kind: "diarize", status: "pending", job_id: id })
  expect(Option.getOrThrow(result.handedOn.staged)).toEqual(outcome(null))
  expect(result.handedOn.balance).toBe(10)
  expect(result.handedOn.events).toBe(0)

  expect(Option.getOrThrow(result.done)).toMatchObject({ status: "done", locked: false })
  expect(Option.isNone(result.stale)).toBe(true)
  expect(Option.getOrThrow(result.transcript).segments[0]!.speaker).toBe("SPEAKER_00")
  expect(result.balance).toBe(9)
  expect(result.events).toBe(1)
})
