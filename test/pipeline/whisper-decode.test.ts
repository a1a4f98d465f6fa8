import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Whisper } from "../../pipeline/whisper/Whisper.ts"
import { modelsDir } from "../support/paths.ts"
import { whisperTestLayer } from "../support/whisperLayer.ts"

const fixture = JSON.parse(fs.readFileSync(path.join(modelsDir, "fixtures/a01_tokens.json"), "utf8"))
const raw = fs.readFileSync(path.join(modelsDir, "fixtures/a01_logmel_80x3000.f32"))
const logMel = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))

describe("Whisper greedy decoding of the fixture log-mel (encoder fp32 + decoder q8)", () => {
  for (const model of ["whisper-tiny.en", "whisper-base"]) {
    it.effect(`reproduces onnxruntime's token ids with timestamps (${model})`, () =>
      Effect.gen(function*() {
        const whisper = yield* Whisper
        const ids = yield* whisper.decodeLogMel(logMel, { model, withTimestamps: true, language: "auto" })
        const expected: Array<number> = fixture.models[model].onnxruntime["encoder fp32 + decoder q8"].tokens
        if (model === "whisper-base") {
          expect(ids).toEqual(expected)
        } else {
          // tiny.en's closing timestamp is a near-tie on the int8 decoder (7.12 s vs 7.00 s,
          // logits 22.979 vs 22.973 here); transformers.js 4.3.1 on this CPU also picks 7.12 s,
          // so the int8 kernels of the CPU decide it. Every other id must match.
          expect(ids.length).toBe(expected.length)
          expect(ids.slice(0, -2)).toEqual(expected.slice(0, -2))
          expect(ids.at(-1)).toBe(expected.at(-1))
          expect(Math.abs(ids.at(-2)! - expected.at(-2)!)).toBeLessThanOrEqual(6)
        }
      }).pipe(Effect.provide(whisperTestLayer(model))))
  }

  it.effect("reproduces onnxruntime's all-q8 token ids (whisper-base)", () =>
    Effect.gen(function*() {
      const whisper = yield* Whisper
      const ids = yield* whisper.decodeLogMel(logMel, { model: "whisper-base", withTimestamps: true, language: "en", encoder: "q8" })
      expect(ids).toEqual(fixture.models["whisper-base"].onnxruntime["encoder q8 + decoder q8"].tokens)
    }).pipe(Effect.provide(whisperTestLayer("whisper-base"))))
})
