/**
 * A failed job's `retryable` is the spec's "resubmitting the same request can succeed" (issue 22):
 * the table of every failure the job runner decides (run failures by cause, the pipeline's kinds,
 * the engine's give-ups), then over HTTP a file that breaks the decoder (not retryable), an engine
 * failure (retryable) and a job past the time limit (not retryable). Link download failures are
 * tested where they are decided (test/services/links-resolver.test.ts), no audio in
 * api-submit.test.ts, the attempt cap in test/work/poison-task.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  givenUpFailure,
  pipelineFailureKind,
  runFailure,
  type RunFailureKind
} from "../../services/jobs/JobFailures.ts"
import type { GiveUpReason } from "../../services/work/TaskKind.ts"
import { accepted, expectJobShape, submitFile, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"

describe("the failure table", () => {
  const runs: Record<RunFailureKind, readonly [string, boolean]> = {
    noAudio: ["NO_AUDIO", false],
    brokenMedia: ["SERVICE_ERROR", false],
    unsupportedLanguage: ["SERVICE_ERROR", false],
    engine: ["SERVICE_ERROR", true],
    mediaMissing: ["SERVICE_ERROR", true],
    noInput: ["SERVICE_ERROR", true],
    unexpected: ["SERVICE_ERROR", true],
    transcriptMissing: ["SERVICE_ERROR", true]
  }
  it.each(Object.entries(runs))("%s → %j", (kind, [code, retryable]) => {
    const failure = runFailure(kind as RunFailureKind, "the reason")
    expect(failure).toMatchObject({ code, retryable })
    // The sentence tells the client what to do, and never promises a retry that cannot work.
    expect(failure.error).toMatch(/[.]$/)
    expect(/can succeed/.test(failure.error)).toBe(retryable)
  })

  it("maps the pipeline's kinds: the file's or the language's failure is final, the engine's is not", () => {
    expect(pipelineFailureKind).toEqual({ media: "brokenMedia", language: "unsupportedLanguage", engine: "engine" })
    expect(runFailure(pipelineFailureKind.language).retryable).toBe(false)
  })

  const givenUp: Record<GiveUpReason, readonly [string, boolean]> = {
    exhausted: ["SERVICE_ERROR", false],
    stalled: ["PROCESSING_STALLED", true],
    timeout: ["PROCESSING_TIMEOUT", false]
  }
  it.each(Object.entries(givenUp))("given up as %s → %j", (reason, [code, retryable]) => {
    const failure = givenUpFailure[reason as GiveUpReason]
    expect(failure).toMatchObject({ code, retryable })
    expect(/can succeed/.test(failure.error)).toBe(retryable)
  })
})

describe("a failed job's retryable over HTTP", () => {
  let server: TestServer
  let key: string

  beforeAll(async () => {
    server = await startServer("job-failures", { jobTimeoutSeconds: 2 }, { pipeline: makeStandIn({ delayMs: 20, steps: 1 }).layer })
    key = (await server.account()).key
  })
  afterAll(async () => {
    await server?.close()
  })

  const failedJob = async (name: string, bytes: Uint8Array) => {
    const answer = await accepted(await submitFile(server, { key, file: { name, bytes } }))
    const job = await waitForJob(server, key, answer.job_id, undefined, { timeoutMs: 30_000 })
    expectJobShape(job)
    expect(job.status).toBe("failed")
    return job
  }

  it("a file whose audio breaks the decoder part-way: SERVICE_ERROR, not retryable", async () => {
    const job = await failedJob("cut.wav", tinyWav({ fail: "corrupt" }))
    expect(job).toMatchObject({ error_code: "SERVICE_ERROR", retryable: false })
    expect(job.error).toMatch(/could not be decoded to its end/)
  })

  it("an engine failure: SERVICE_ERROR, retryable", async () => {
    const job = await failedJob("engine.wav", tinyWav({ fail: "error" }))
    expect(job).toMatchObject({ error_code: "SERVICE_ERROR", retryable: true })
  })

  it("a job past the time limit: PROCESSING_TIMEOUT, not retryable", async () => {
    const job = await failedJob("slow.wav", tinyWav({ hangMs: 10_000 }))
    expect(job).toMatchObject({ error_code: "PROCESSING_TIMEOUT", retryable: false })
  })
})
