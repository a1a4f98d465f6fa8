/** Layers and transcripts shared by the search tests. */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DatabaseLayer } from "../../layers/Database.ts"
import { OnnxRuntime } from "../../pipeline/onnx/OnnxRuntime.ts"
import type { Segment, Transcript } from "../../src/contract/domain/Transcript.ts"
import { Embedder } from "../../search/Embedder.ts"
import { testStorageConfig } from "../support/database.ts"
import { modelsDir } from "../support/paths.ts"

export const embedderLayer = Embedder.layer({ modelsDir }).pipe(
  Layer.provide(OnnxRuntime.layer({ threads: 2, idleUnloadMs: 60_000 }))
)

/** A migrated database of the test file's own (PGlite, or the test server when configured). */
export const testDatabase = (label: string) => DatabaseLayer.pipe(Layer.provide(testStorageConfig(label)))

/**
 * Turns the embedding column into the no-pgvector layout (bytea), so the exact-scan path
 * of the Postgres backend runs on PGlite too.
 */
export const withoutPgvector = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM search_passages`
  yield* sql`ALTER TABLE search_passages DROP COLUMN embedding`
  yield* sql`ALTER TABLE search_passages ADD COLUMN embedding bytea NOT NULL`
}).pipe(Effect.orDie))

export interface Line {
  readonly text: string
  readonly speaker?: string
  /** Seconds; otherwise the line follows the previous one. */
  readonly start?: number
  readonly end?: number
}

/**
 * A transcript from lines of text: each line one segment, timed at 2.6 words per second
 * with a 0.4 s pause between lines unless its times are given.
 */
export const transcriptOf = (lines: ReadonlyArray<Line>, language: string | null = "en"): Transcript => {
  const segments: Array<Segment> = []
  let clock = 0
  for (const line of lines) {
    const words = line.text.split(/\s+/u).filter((w) => w !== "").length
    const start = line.start ?? clock + (segments.length === 0 ? 0 : 0.4)
    const end = line.end ?? start + Math.max(words / 2.6, 0.5)
    segments.push({ start, end, text: line.text, speaker: line.speaker ?? null })
    clock = end
  }
  return {
    text: lines.map((l) => l.text).join(" "),
    language,
    duration: clock,
    speech_detected: segments.length > 0,
    segments
  }
}

/** Sentences of a text, each with its end punctuation. */
export const sentences = (text: string): Array<string> =>
  (text.match(/[^.!?]+[.!?]+["”]?|[^.!?]+$/gu) ?? []).map((s) => s.trim()).filter((s) => s !== "")
