/**
 * Quality of the second half on the project's own quality set (test/quality: four recordings
 * made with the machine's TTS voices plus shared/media a05 and a08, transcribed by the real
 * pipeline and cached by test/quality/transcribe.sh):
 *
 *   npx node bench/quality.ts            figures per recording with what missed, then the totals
 *   npx node bench/quality.ts --brief    one line per recording and the totals
 *
 * Prints moment hit@1 and MRR within each recording (library search restricted to the
 * recording, top 5), the share of unanswerable questions with no hit at the default
 * min_relevance, the summaries' fact coverage (of the annotated facts, and of those whisper
 * heard), key-phrase precision of the topics (and how many of the annotated key phrases the
 * transcripts say are among the candidates they are ranked from), and how many quotes and clip
 * candidates open on an answer or a reaction. Targets (issue 24): hit@1 ≥ 0.8, no-hit ≥ 0.9, coverage ≥ 0.7, 0.
 * Embedded PGlite in a temp dir; ~1 min on 2 cores, mostly MiniLM.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, Option } from "effect"
import { DatabaseLayer } from "../layers/Database.ts"
import { OnnxRuntime } from "../pipeline/onnx/OnnxRuntime.ts"
import { Embedder } from "../search/Embedder.ts"
import { PostgresSearchBackend } from "../search/PostgresSearchBackend.ts"
import { SearchIndex } from "../search/SearchIndex.ts"
import { DatabaseConfig } from "../services/config/DatabaseConfig.ts"
import { StorageConfig } from "../services/config/StorageConfig.ts"
import { Insights } from "../services/insights/Insights.ts"
import { measureRecording, report } from "../test/quality/measure.ts"
import { qualitySet } from "../test/quality/set.ts"
import { modelsDir } from "../test/support/paths.ts"

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-quality-"))
const embedder = Embedder.layer({ modelsDir, threads: 1 }).pipe(Layer.provide(OnnxRuntime.layer({ threads: 1, idleUnloadMs: 60_000 })))
const database = DatabaseLayer.pipe(Layer.provide(Layer.merge(StorageConfig.layerWith({ dataDir }), DatabaseConfig.layerWith({ databaseUrl: Option.none() }))))
const layer = Layer.mergeAll(
  SearchIndex.layer.pipe(Layer.provide(PostgresSearchBackend.layer()), Layer.provide(database)),
  Insights.layer()
).pipe(Layer.provideMerge(embedder))

const program = Effect.gen(function*() {
  const started = performance.now()
  const results = []
  for (const recording of qualitySet) results.push(yield* measureRecording(recording))
  console.log(report(results, !process.argv.includes("--brief")))
  console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`)
})

try {
  await Effect.runPromise(program.pipe(Effect.provide(layer), Effect.scoped))
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true })
}
