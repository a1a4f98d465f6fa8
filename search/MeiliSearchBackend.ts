/**
 * Search passages in Meilisearch: one index per deployment, documents carrying their
 * MiniLM vector (`embedders.minilm`, source `userProvided`, 384 dimensions: Meilisearch
 * never embeds anything itself), hybrid search mixing its keyword ranking with the
 * vector ranking by `semanticRatio`.
 *
 * Isolation: every query filters on `account_id` (filterable, with `job_id`, `kind`,
 * `language`, `created_at`), built here from the request, never from user text.
 * Writes wait for their task, so a search right after `replaceJob` sees the new passages.
 * An unreachable server at start fails the layer (MeilisearchUnavailable); a failure
 * afterwards is a defect of the call.
 */
import { Effect, Layer, Schema } from "effect"
import { Meilisearch, type Task } from "meilisearch"
import { type Candidate, type CandidateQuery, type JobMeta, type LanguageBound, type PassageDocument, passageRecord, type PassageRecord, SearchBackend } from "./SearchBackend.ts"

export class MeilisearchUnavailable extends Schema.TaggedError<MeilisearchUnavailable>()("MeilisearchUnavailable", {
  url: Schema.String,
  message: Schema.String
}) {}

export interface MeiliSearchOptions {
  readonly url: string
  readonly apiKey?: string | undefined
  /** Index uid; one per deployment. */
  readonly index?: string | undefined
  /** 0 = keywords only, 1 = vectors only. */
  readonly semanticRatio?: number | undefined
}

export const EMBEDDER = "minilm"

interface PassageHit extends PassageRecord {
  readonly id: string
  /** Epoch milliseconds of the job's creation. */
  readonly created_at: number
  readonly _rankingScore?: number
}

/** Filter values are ids and codes from the request; quotes and backslashes are escaped anyway. */
const quoted = (value: string): string => `"${value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"")}"`

const message = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

export const MeiliSearchBackend = {
  layer: (options: MeiliSearchOptions) =>
    Layer.effect(
      SearchBackend,
      Effect.gen(function*() {
        const client = new Meilisearch({ host: options.url, ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }) })
        const uid = options.index ?? "verbatim_passages"
        const semanticRatio = options.semanticRatio ?? 0.7
        const index = client.index<PassageHit>(uid)

        const settle = (task: Task, allowed?: string) =>
          task.status === "succeeded" || (allowed !== undefined && task.error?.code === allowed)
            ? Effect.void
            : Effect.die(new Error(`Meilisearch task ${task.type} ${task.status}: ${task.error?.message ?? ""}`))

        yield* Effect.tryPromise({
          try: async () => {
            const created = await client.createIndex(uid, { primaryKey: "id" }).waitTask()
            const configured = await index.updateSettings({
              searchableAttributes: ["text"],
              filterableAttributes: ["account_id", "job_id", "kind", "language", "created_at"],
              embedders: { [EMBEDDER]: { source: "userProvided", dimensions: 384 } }
            }).waitTask()
            return [created, configured] as const
          },
          catch: (cause) => new MeilisearchUnavailable({ url: options.url, message: message(cause) })
        }).pipe(
          Effect.flatMap(([created, configured]) =>
            Effect.andThen(settle(created, "index_already_exists"), settle(configured))
          )
        )

        const call = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (cause) => cause }).pipe(Effect.orDie)

        const replaceJob = Effect.fn("SearchBackend.replaceJob")(
          function*(accountId: string, jobId: string, meta: JobMeta, documents: ReadonlyArray<PassageDocument>) {
            yield* Effect.flatMap(call(() => index.deleteDocuments({ filter: `job_id = ${quoted(jobId)}` }).waitTask()), (t) => settle(t))
            if (documents.length === 0) return
            const docs = documents.map((d, i) => ({
              ...passageRecord(accountId, jobId, meta, d),
              id: `${jobId}_${i}`,
              created_at: meta.created_at.getTime(),
              _vectors: { [EMBEDDER]: Array.from(d.embedding) }
            }))
            yield* Effect.flatMap(call(() => index.addDocuments(docs).waitTask()), (t) => settle(t))
          }
        )

        const removeJob = Effect.fn("SearchBackend.removeJob")(function*(jobId: string) {
          yield* Effect.flatMap(call(() => index.deleteDocuments({ filter: `job_id = ${quoted(jobId)}` }).waitTask()), (t) => settle(t))
        })

        const candidates = Effect.fn("SearchBackend.candidates")(function*(query: CandidateQuery) {
          if (query.jobIds !== undefined && query.jobIds.length === 0) return []
          const filter = [
            `account_id = ${quoted(query.accountId)}`,
            ...(query.kind === undefined ? [] : [`kind = ${quoted(query.kind)}`]),
            ...(query.jobIds === undefined ? [] : [`job_id IN [${query.jobIds.map(quoted).join(", ")}]`]),
            ...(query.excludeJobIds === undefined || query.excludeJobIds.length === 0
              ? []
              : [`job_id NOT IN [${query.excludeJobIds.map(quoted).join(", ")}]`]),
            ...(query.language === undefined ? [] : [`language = ${quoted(query.language)}`]),
            ...(query.since === undefined ? [] : [`created_at >= ${query.since.getTime()}`]),
            ...(query.until === undefined ? [] : [`created_at < ${query.until.getTime()}`])
          ]
          const response = yield* call(() =>
            index.search(query.q, {
              filter,
              limit: query.limit,
              vector: Array.from(query.vector),
              hybrid: { embedder: EMBEDDER, semanticRatio },
              showRankingScore: true,
              attributesToRetrieve: ["job_id", "filename", "kind", "start", "end", "speaker", "text", "moments"]
            })
          )
          return response.hits.map((hit): Candidate => ({
            passage: {
              jobId: hit.job_id,
              filename: hit.filename,
              kind: hit.kind,
              start: hit.start,
              end: hit.end,
              speaker: hit.speaker,
              text: hit.text,
              moments: hit.moments
            },
            score: hit._rankingScore ?? 0
          }))
        })

        // Meilisearch filters a hybrid search by language itself: whether there is any is enough.
        const languageJobs = Effect.fn("SearchBackend.languageJobs")(function*(accountId: string, language: string, atMost: LanguageBound) {
          const response = yield* call(() =>
            index.search("", { filter: [`account_id = ${quoted(accountId)}`, `language = ${quoted(language)}`], limit: 1, attributesToRetrieve: ["job_id"] })
          )
          const any = response.hits.length > 0
          return { jobIds: [], more: any, passages: any ? atMost.passages + 1 : 0 }
        })

        return SearchBackend.of({ vectorSearch: "meilisearch", replaceJob, removeJob, candidates, languageJobs })
      })
    )
}
