/**
 * The clip endpoints' rules over real sockets (renders here are short and incidental; the
 * render itself is clips-render.test.ts): validation (422), an unfinished job (409), a locked
 * job and a balance that cannot cover the clip (402 with pay links, nothing charged or
 * created), ownership (404 for another account's job or clip, 400 for a malformed id), the
 * clip record, the charge taken once, deletion (204, then 404), and the video link's token
 * rules (401 without, 403 altered).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Billing } from "../../services/billing/Billing.ts"
import type { AccountId } from "../../src/contract/domain/Ids.ts"
import { accepted, expectError, request, submitFile } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { type ClipBody, createClip, finishedJob, getClip, waitForClip } from "./support.ts"

let server: TestServer
let key: string
let accountId: AccountId
let jobId: string
const standIn = makeStandIn({ delayMs: 50, steps: 1 })

const transcript = {
  text: "One two three four.",
  language: "en",
  duration: 20,
  speech_detected: true,
  segments: [{ start: 0.5, end: 3, text: "One two three four.", speaker: null }]
}

beforeAll(async () => {
  server = await startServer("clips-api", { workers: 1, decoder: "wasm" }, { pipeline: standIn.layer })
  const account = await server.account()
  key = account.key
  accountId = account.accountId
  jobId = await finishedJob(server, key, { name: "talk.wav", bytes: tinyWav(undefined, 3) }, { durationSeconds: 20, transcript })
}, 60_000)
afterAll(async () => {
  await server?.close()
})

const balance = (id: AccountId) => server.run(Effect.gen(function*() {
  return yield* (yield* Billing).balanceMinutes(id)
}))

const clipCount = async (id: string) => {
  const { SqlClient } = await import("effect/sql")
  return server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM clips WHERE job_id = ${id}`.pipe(Effect.orDie)
    return rows[0]!.n
  }))
}

describe("POST /v1/jobs/{job_id}/clips: validation", () => {
  const refused: Array<[string, Record<string, unknown>]> = [
    ["start after end", { start_s: 5, end_s: 4 }],
    ["start equal to end", { start_s: 5, end_s: 5 }],
    ["shorter than 1 s", { start_s: 1, end_s: 1.5 }],
    ["longer than 180 s", { start_s: 0, end_s: 181 }],
    ["past the recording", { start_s: 15, end_s: 25 }],
    ["starting past the recording", { start_s: 21, end_s: 23 }],
    ["negative start", { start_s: -1, end_s: 3 }],
    ["unknown style", { start_s: 1, end_s: 3, caption_style: "comic-sans" }],
    ["missing end", { start_s: 1 }],
    ["text instead of a number", { start_s: "one", end_s: 3 }]
  ]
  for (const [what, body] of refused) {
    it(`answers 422 for ${what}, creating and charging nothing`, async () => {
      const before = await balance(accountId)
      const response = await createClip(server, key, jobId, body)
      const text = await response.text()
      expect(response.status, text).toBe(422)
      const parsed = JSON.parse(text) as { code: string; detail: Array<{ loc: Array<string | number> }> }
      expect(parsed.code).toBe("VALIDATION_FAILED")
      expect(parsed.detail.length).toBeGreaterThan(0)
      expect(await balance(accountId)).toBeCloseTo(before, 6)
      expect(await clipCount(jobId)).toBe(0)
    })
  }

  it("checks the id, the key and the owner", async () => {
    await expectError(await createClip(server, key, "nope", { start_s: 1, end_s: 3 }), 400, "BAD_ID")
    await expectError(
      await fetch(`${server.url}/v1/jobs/${jobId}/clips`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ start_s: 1, end_s: 3 })
      }),
      401,
      "MISSING_API_KEY"
    )
    const other = (await server.account()).key
    await expectError(await createClip(server, other, jobId, { start_s: 1, end_s: 3 }), 404, "NOT_FOUND")
    await expectError(await createClip(server, key, crypto.randomUUID(), { start_s: 1, end_s: 3 }), 404, "NOT_FOUND")
  })
})

describe("POST /v1/jobs/{job_id}/clips: job state and credit", () => {
  it("answers 409 NOT_READY while the job runs", async () => {
    const id = (await accepted(await submitFile(server, {
      key,
      file: { name: "slow.wav", bytes: tinyWav({ delayMs: 8000, steps: 4 }, 2) }
    }))).job_id
    await expectError(await createClip(server, key, id, { start_s: 0, end_s: 1.5 }), 409, "NOT_READY")
    await request(server, "DELETE", `/v1/jobs/${id}`, key)
  })

  it("answers 402 transcript_locked for a locked job", async () => {
    const id = await finishedJob(server, key, { name: "a.wav", bytes: tinyWav(undefined, 2) }, { durationSeconds: 20, transcript })
    // The state Billing.settle leaves a job in when the balance could not cover it.
    const { SqlClient } = await import("effect/sql")
    await server.run(Effect.gen(function*() {
      yield* (yield* SqlClient.SqlClient)`UPDATE jobs SET locked = true WHERE id = ${id}`.pipe(Effect.orDie)
    }))
    const response = await createClip(server, key, id, { start_s: 0, end_s: 1.5 })
    const body = await response.clone().json() as { upgrade_url?: string; checkout_url?: string }
    await expectError(response, 402, "transcript_locked")
    expect(body.upgrade_url).toMatch(/\/pricing$/)
    expect(body.checkout_url).toMatch(/\/checkout\/txn_/)
    expect(await clipCount(id)).toBe(0)
  })

  it("answers 402 NO_CREDITS with a pay link when the balance cannot cover the clip", async () => {
    // 0.04 minutes: enough for the 2 s job (0.0333), too little for a 3 s clip (0.05).
    const poor = await server.account(undefined, { minutes: 0.04 })
    const id = await finishedJob(server, poor.key, { name: "b.wav", bytes: tinyWav(undefined, 2) }, { durationSeconds: 20, transcript })
    const before = await balance(poor.accountId)
    const response = await createClip(server, poor.key, id, { start_s: 0, end_s: 3 })
    const body = await response.clone().json() as { checkout_url?: string; required_minutes?: number; balance_minutes?: number }
    await expectError(response, 402, "NO_CREDITS")
    expect(body.checkout_url).toMatch(/\/checkout\/txn_/)
    expect(body.required_minutes).toBeCloseTo(0.05, 4)
    expect(body.balance_minutes).toBeCloseTo(before, 4)
    expect(await balance(poor.accountId)).toBeCloseTo(before, 6)
    expect(await clipCount(id)).toBe(0)
  })
})

describe("a clip's record, charge and deletion", () => {
  let clip: ClipBody

  it("answers 202 with the record and charges the clip's minutes once", async () => {
    const before = await balance(accountId)
    const response = await createClip(server, key, jobId, { start_s: 0.5, end_s: 2.0, caption_style: "none" })
    clip = await response.json() as ClipBody
    expect(response.status, JSON.stringify(clip)).toBe(202)
    expect(clip).toMatchObject({
      job_id: jobId,
      status: "queued",
      progress: 0,
      start_s: 0.5,
      end_s: 2.0,
      caption_style: "none",
      duration: null,
      video_url: null,
      error: null,
      completed_at: null
    })
    expect(clip.clip_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(Math.abs(clip.created_at - Date.now() / 1000)).toBeLessThan(60)
    // 1.5 s is billed as 2 s, like a job.
    expect(before - (await balance(accountId))).toBeCloseTo(2 / 60, 4)
    const same = await getClip(server, key, clip.clip_id)
    expect(same.clip_id).toBe(clip.clip_id)
    const defaultStyle = await createClip(server, key, jobId, { start_s: 4, end_s: 5 })
    expect(((await defaultStyle.json()) as ClipBody).caption_style).toBe("karaoke")
  })

  it("is another account's 404, and a malformed id is 400", async () => {
    const other = (await server.account()).key
    await expectError(await request(server, "GET", `/v1/clips/${clip.clip_id}`, other), 404, "NOT_FOUND")
    await expectError(await request(server, "DELETE", `/v1/clips/${clip.clip_id}`, other), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", `/v1/clips/${crypto.randomUUID()}`, key), 404, "NOT_FOUND")
    await expectError(await request(server, "GET", "/v1/clips/nope", key), 400, "BAD_ID")
  })

  it("has a signed video link once done; the link refuses missing and altered tokens", async () => {
    const done = await waitForClip(server, key, clip.clip_id)
    expect(done.status).toBe("done")
    const url = new URL(done.video_url!)
    const token = url.searchParams.get("token")!
    expect((await fetch(done.video_url!, { method: "HEAD" })).status).toBe(200)
    await expectError(await fetch(`${server.url}/v1/clips/${clip.clip_id}/video`), 401, "TOKEN_MISSING")
    await expectError(await fetch(`${server.url}/v1/clips/${clip.clip_id}/video?token=${token}x`), 403, "TOKEN_INVALID")
    // A playback token is not a clip token.
    await expectError(await fetch(`${server.url}/v1/jobs/${jobId}/audio?token=${token}`), 403, "TOKEN_INVALID")
  }, 120_000)

  it("DELETE answers 204, then the clip and its link are gone and nothing is refunded", async () => {
    const { video_url } = await getClip(server, key, clip.clip_id)
    const before = await balance(accountId)
    expect((await request(server, "DELETE", `/v1/clips/${clip.clip_id}`, key)).status).toBe(204)
    await expectError(await request(server, "GET", `/v1/clips/${clip.clip_id}`, key), 404, "NOT_FOUND")
    await expectError(await request(server, "DELETE", `/v1/clips/${clip.clip_id}`, key), 404, "NOT_FOUND")
    await expectError(await fetch(video_url!), 404, "NOT_FOUND")
    expect(await balance(accountId)).toBeCloseTo(before, 6)
  })

  it("a deleted job's clips are 404", async () => {
    const id = await finishedJob(server, key, { name: "c.wav", bytes: tinyWav(undefined, 2) }, { durationSeconds: 20, transcript })
    const created = await (await createClip(server, key, id, { start_s: 0, end_s: 1, caption_style: "none" })).json() as ClipBody
    expect((await request(server, "DELETE", `/v1/jobs/${id}`, key)).status).toBe(204)
    await expectError(await request(server, "GET", `/v1/clips/${created.clip_id}`, key), 404, "NOT_FOUND")
  })
})
