/**
 * Clip candidates and clip search of one finished job, as use cases.
 *
 * Order of answers (as for clips): 404 for a job that is not the caller's; 409 NOT_READY until
 * it is done; 402 `transcript_locked` (with the price list and a pay link) for a locked job.
 * Candidates embed the job's phrases for centrality on each request (MiniLM, one thread,
 * ~5–15 ms a phrase: a few seconds for an hour of speech, ~700 phrases); clip search is the
 * library search filtered to the job, so it finds the job once it is indexed.
 */
import { Context, Effect, Layer } from "effect"
import { Embedder } from "../../search/Embedder.ts"
import { NotFound, NotReady, PaymentRequired, type ValidationFailed } from "../../src/contract/api/Errors.ts"
import type { CandidateKind, ClipCandidatesAnswer, ClipSearchAnswer } from "../../src/contract/api/SearchApi.ts"
import type { AccountCaller } from "../../src/contract/api/Security.ts"
import { billableMinutes } from "../../src/contract/domain/Catalog.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import type { Transcript } from "../../src/contract/domain/Transcript.ts"
import { JobAccess, jobNotFound } from "../access/JobAccess.ts"
import { Paywall } from "../billing/Paywall.ts"
import type { JobRecord } from "../jobs/JobRecord.ts"
import { TranscriptAccess } from "../transcripts/TranscriptAccess.ts"
import { clipCandidates, phrasesOf } from "./ClipCandidates.ts"
import { LibrarySearch } from "./LibrarySearch.ts"

/** Moments a clip search answers at most. */
export const CLIP_SEARCH_LIMIT = 10

export class ClipDiscovery extends Context.Service<ClipDiscovery, {
  candidates(caller: AccountCaller, jobId: JobId, kind: CandidateKind | "all", base: string): Effect.Effect<ClipCandidatesAnswer, NotFound | NotReady | PaymentRequired>
  search(caller: AccountCaller, jobId: JobId, q: string, base: string): Effect.Effect<ClipSearchAnswer, NotFound | NotReady | PaymentRequired | ValidationFailed>
}>()("verbatim/search-index/ClipDiscovery") {
  static readonly layer = Layer.effect(
    ClipDiscovery,
    Effect.gen(function*() {
      const access = yield* JobAccess
      const transcripts = yield* TranscriptAccess
      const paywall = yield* Paywall
      const embedder = yield* Embedder
      const library = yield* LibrarySearch

      /** The caller's finished, unlocked job and its transcript. */
      const readable = Effect.fnUntraced(function*(caller: AccountCaller, jobId: JobId, base: string) {
        const job: JobRecord = yield* access.load(caller, jobId).pipe(
          Effect.catchTag("ClaimTokenRequired", () => Effect.fail(jobNotFound()))
        )
        const transcript: Transcript = yield* transcripts.ready(job)
        if (job.locked) {
          const needed = billableMinutes(job.audio_duration_seconds ?? 0)
          return yield* new PaymentRequired({
            error: "This job's transcript is locked until the account has credit for it; so are its moments.",
            code: "transcript_locked",
            upgrade_url: paywall.pricingUrl(base),
            checkout_url: yield* paywall.coveringUrl(caller.account.id, needed, base),
            required_minutes: needed
          })
        }
        return { job, transcript }
      })

      const candidates = Effect.fn("ClipDiscovery.candidates")(
        function*(caller: AccountCaller, jobId: JobId, kind: CandidateKind | "all", base: string) {
          const { transcript } = yield* readable(caller, jobId, base)
          const phrases = phrasesOf(transcript)
          const vectors = yield* embedder.embed(phrases.map((p) => p.text))
          return { candidates: clipCandidates(phrases, vectors, { kind }) }
        }
      )

      const search = Effect.fn("ClipDiscovery.search")(function*(caller: AccountCaller, jobId: JobId, q: string, base: string) {
        const { job } = yield* readable(caller, jobId, base)
        const answer = yield* library.readableHits(
          { accountId: caller.account.id, q, jobIds: [job.id], limit: CLIP_SEARCH_LIMIT },
          ["query", "q"]
        )
        return { moments: answer.hits, query_ms: answer.query_ms }
      })

      return ClipDiscovery.of({ candidates, search })
    })
  )
}
