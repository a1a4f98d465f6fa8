/**
 * Speaker hints (`min_speakers`, `max_speakers`, `speakers_expected`).
 * - On the real voice encoder and VAD: the two-voice dialogue (a05) is two speakers unhinted and one
 *   with `max_speakers=1`; the three-voice panel (test/fixtures/panel) comes out as two with
 *   `speakers_expected=2`; asked for at least three, a05 is cut further down the dendrogram.
 * - Over real sockets: a05 submitted with `diarize=true&max_speakers=1` ends with one speaker
 *   label; each submit path (multipart, url, uploads/init) refuses hints out of range, without
 *   diarize, min above max, and speakers_expected with min/max, with 422 and detail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Diarizer } from "../../pipeline/diarize/Diarizer.ts"
import type { ClusterBounds } from "../../pipeline/diarize/Clustering.ts"
import { MediaDecoder } from "../../pipeline/media/MediaDecoder.ts"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import { VoiceActivity } from "../../pipeline/vad/VoiceActivity.ts"
import { accepted, expectError, postJson, request, submitFile, waitForJob } from "../support/jobsClient.ts"
import { mediaDir, modelsDir } from "../support/paths.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { readWavPcm16 } from "../support/wav.ts"

const panelPath = path.resolve(import.meta.dirname, "../fixtures/panel/panel.flac")

const layers = Layer.mergeAll(
  Diarizer.layer({ modelsDir }),
  VoiceActivity.layer(),
  MediaDecoder.layer({ backend: "wasm" })
).pipe(Layer.provide(OnnxRuntime.layer({ threads: 2, idleUnloadMs: 10_000 })))

/** Distinct speakers diarization finds in a file with the given hints. */
const speakersIn = (file: string, bounds: ClusterBounds) =>
  Effect.gen(function*() {
    const pcm = file.endsWith(".wav")
      ? readWavPcm16(file).samples
      : Float32Array.from((yield* Stream.runCollect((yield* MediaDecoder).decode(file))).flatMap((c) => Array.from(c)))
    const summary = yield* (yield* VoiceActivity).detect(Stream.make(pcm))
    const turns = yield* (yield* Diarizer).diarize(pcm, summary.regions, bounds)
    return new Set(turns.map((t) => t.speaker)).size
  }).pipe(Effect.provide(layers), Effect.runPromise)

describe("the diarizer honours speaker hints (real audio)", () => {
  const a05 = path.join(mediaDir, "a05_dialogue_slt_kal.wav")

  it("a05: two speakers unhinted, one with max_speakers=1, three when at least three are asked for", async () => {
    expect(await speakersIn(a05, {})).toBe(2)
    expect(await speakersIn(a05, { max: 1 })).toBe(1)
    expect(await speakersIn(a05, { min: 3 })).toBe(3)
  }, 120_000)

  it("the three-voice panel: three unhinted, two with speakers_expected=2", async () => {
    expect(await speakersIn(panelPath, {})).toBe(3)
    expect(await speakersIn(panelPath, { min: 2, max: 2 })).toBe(2)
  }, 180_000)
})

describe("speaker hints over HTTP", () => {
  let server: TestServer
  let key: string
  const a05Bytes = new Uint8Array(fs.readFileSync(path.join(mediaDir, "a05_dialogue_slt_kal.wav")))

  beforeAll(async () => {
    server = await startServer("speaker-hints", { rateLimitPerMinute: 10_000 })
    key = (await server.account()).key
  })
  afterAll(async () => {
    await server?.close()
  })

  it("a05 with diarize and max_speakers=1 ends with one speaker", async () => {
    const { job_id } = await accepted(await submitFile(server, {
      key,
      file: { name: "a05.wav", bytes: a05Bytes, type: "audio/wav" },
      fields: { diarize: "true", max_speakers: "1" }
    }))
    const done = await waitForJob(server, key, job_id, undefined, { timeoutMs: 180_000, intervalMs: 250 })
    expect(done.status).toBe("done")
    const response = await request(server, "GET", `/v1/jobs/${job_id}/result`, key)
    const result = await response.json() as { segments: ReadonlyArray<{ speaker: string | null }> }
    expect(result.segments.length).toBeGreaterThan(1)
    expect(new Set(result.segments.map((s) => s.speaker))).toEqual(new Set(["SPEAKER_00"]))
  }, 240_000)

  const refusals: ReadonlyArray<readonly [Record<string, string | number | boolean>, string]> = [
    [{ diarize: true, max_speakers: 0 }, "max_speakers"],
    [{ diarize: true, min_speakers: 21 }, "min_speakers"],
    [{ diarize: true, speakers_expected: 25 }, "speakers_expected"],
    [{ diarize: true, min_speakers: 1.5 }, "min_speakers"],
    [{ max_speakers: 2 }, "max_speakers"],
    [{ diarize: false, speakers_expected: 2 }, "speakers_expected"],
    [{ diarize: true, min_speakers: 3, max_speakers: 2 }, "min_speakers"],
    [{ diarize: true, speakers_expected: 2, max_speakers: 3 }, "max_speakers"]
  ]

  const checkRefusal = async (response: Response, field: string, what: string) => {
    const body = await expectError(response, 422, "VALIDATION_FAILED") as unknown as { detail: ReadonlyArray<{ loc: ReadonlyArray<string> }> }
    expect(body.detail.map((d) => d.loc.join(".")), what).toContain(`body.${field}`)
  }

  it("multipart submit refuses bad hints with 422 and detail", async () => {
    for (const [fields, field] of [...refusals, [{ diarize: "true", min_speakers: "two" }, "min_speakers"] as const]) {
      const response = await submitFile(server, {
        key,
        file: { name: "a05.wav", bytes: a05Bytes, type: "audio/wav" },
        fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)]))
      })
      await checkRefusal(response, field, JSON.stringify(fields))
    }
  })

  it("link submit and uploads/init refuse bad hints with 422 and detail", async () => {
    for (const [fields, field] of refusals) {
      await checkRefusal(await postJson(server, "/v1/transcribe/url", { url: "https://example.com/a.mp3", ...fields }, key), field, `url ${JSON.stringify(fields)}`)
      await checkRefusal(
        await postJson(server, "/v1/uploads/init", { filename: "a.wav", size_bytes: 1000, content_type: "audio/wav", ...fields }, key),
        field,
        `init ${JSON.stringify(fields)}`
      )
    }
  })

  it("uploads/init keeps speakers_expected as both bounds in the ticket's options", async () => {
    const response = await postJson(server, "/v1/uploads/init", {
      filename: "a.wav",
      size_bytes: 1000,
      content_type: "audio/wav",
      diarize: true,
      speakers_expected: 2
    }, key)
    const ticket = await response.json() as { options: Record<string, unknown> }
    expect(response.status, JSON.stringify(ticket)).toBe(200)
    expect(ticket.options).toMatchObject({ diarize: true, min_speakers: 2, max_speakers: 2 })
  })
})
