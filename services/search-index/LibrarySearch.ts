/**
 * `POST /v1/library/search` as a use case: the caller's question over their own library.
 * Hits of locked jobs (transcripts not yet paid for) and of jobs deleted since they were
 * indexed are left out, so the index may lag a change without showing what may not be read.
 * Locked jobs are excluded in the index query itself, so they never take the places of
 * readable hits (a page of `limit` stays full); the check after the search catches a job
 * locked or deleted meanwhile.
 * A question that is only spaces (the service trims) is 422 like an empty one.
 * Hits carry the name a person gave their speaker (`speaker_name`), read with the page.
 * Hits under `min_relevance` (default 0.5) are left out; searches inside one job
 * (`readableHits` from clip search and chat) keep every ranked hit unless they ask.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { type InvalidSearchQuery, SearchIndex, type SearchRequest } from "../../search/SearchIndex.ts"
import { ValidationFailed } from "../../src/contract/api/Errors.ts"
import { defaultMinRelevance, type LibrarySearchAnswer, type LibrarySearchRequest, type SearchHit } from "../../src/contract/api/SearchApi.ts"
import type { AccountId, JobId } from "../../src/contract/domain/Ids.ts"
import { JobStore } from "../jobs/JobStore.ts"
import { SpeakerNameStore } from "../speakers/SpeakerNameStore.ts"

export const invalidQuery = (loc: ReadonlyArray<string>) => (e: InvalidSearchQuery) =>
  new ValidationFailed({ error: `Invalid search: ${e.message}.`, code: "VALIDATION_FAILED", detail: [{ loc, msg: e.message }] })

export class LibrarySearch extends Context.Service<LibrarySearch, {
  search(accountId: AccountId, request: LibrarySearchRequest): Effect.Effect<LibrarySearchAnswer, ValidationFailed>
  /** The readable hits of a search (shared with the search inside one job), timed. */
  readableHits(request: SearchRequest, loc: ReadonlyArray<string>): Effect.Effect<LibrarySearchAnswer, ValidationFailed>
}>()("verbatim/search-index/LibrarySearch") {
  static readonly layer = Layer.effect(
    LibrarySearch,
    Effect.gen(function*() {
      const index = yield* SearchIndex
      const jobs = yield* JobStore
      const speakerNames = yield* SpeakerNameStore

      const readableHits = Effect.fn("LibrarySearch.readableHits")(function*(request: SearchRequest, loc: ReadonlyArray<string>) {
        const started = yield* Clock.currentTimeMillis
        const locked = yield* jobs.lockedIds(request.accountId as AccountId)
        const hits = yield* index.search({ ...request, excludeJobIds: [...(request.excludeJobIds ?? []), ...locked] }).pipe(
          Effect.mapError(invalidQuery(loc))
        )
        const ids = Array.from(new Set(hits.map((hit) => hit.job_id as JobId)))
        const readable = new Set(
          ids.length === 0 ? [] : (yield* jobs.getMany(ids)).filter((job) => !job.locked).map((job) => job.id as string)
        )
        const names = yield* speakerNames.forJobs(Array.from(readable) as Array<JobId>)
        const shown: Array<SearchHit> = hits.filter((hit) => readable.has(hit.job_id)).map((hit) => ({
          job_id: hit.job_id,
          filename: hit.filename,
          start: hit.start,
          end: hit.end,
          text: hit.text,
          speaker: hit.speaker,
          speaker_name: hit.speaker === null ? null : names.get(hit.job_id)?.get(hit.speaker) ?? null,
          score: hit.score,
          relevance: hit.relevance,
          highlights: hit.highlights.map(([a, b]) => [a, b] as const)
        }))
        return { hits: shown, query_ms: (yield* Clock.currentTimeMillis) - started }
      })

      const search = Effect.fn("LibrarySearch.search")(function*(accountId: AccountId, request: LibrarySearchRequest) {
        return yield* readableHits({
          accountId,
          q: request.q,
          limit: request.limit,
          jobIds: request.job_ids,
          language: request.language,
          since: request.since === undefined ? undefined : new Date(request.since * 1000),
          until: request.until === undefined ? undefined : new Date(request.until * 1000),
          minRelevance: request.min_relevance ?? defaultMinRelevance
        }, ["body", "q"])
      })

      return LibrarySearch.of({ search, readableHits })
    })
  )
}
