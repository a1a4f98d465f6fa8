/**
 * "Ask this recording" as use cases (`POST` and `GET /v1/jobs/{job_id}/chat`).
 *
 * Order of answers: 403 `SIGN_IN_REQUIRED` for a caller that is not a signed-in user (an API
 * key: the spec keeps chat off keys), before anything about the job is looked at; 404 for a
 * job that is not the caller's; then, for a question, 409 NOT_READY until the job is done and
 * 402 `transcript_locked` for a locked job. The moments are the library search inside the job
 * (so a job is found a moment after it finishes, once indexed), with the speakers' given names;
 * the written answer is ChatAnswerer's. Every exchange is kept per job and account.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { chatMomentsMax, type ChatHistory, type ChatMessage, type ChatMoment } from "../../src/contract/api/ChatApi.ts"
import type { NotFound, NotReady, PaymentRequired, ValidationFailed } from "../../src/contract/api/Errors.ts"
import { searchQueryMaxChars } from "../../src/contract/api/SearchApi.ts"
import type { AccountCaller } from "../../src/contract/api/Security.ts"
import { SignedInUserOnly } from "../../src/contract/api/SessionErrors.ts"
import type { JobId } from "../../src/contract/domain/Ids.ts"
import { JobAccess, jobNotFound } from "../access/JobAccess.ts"
import { Paywall } from "../billing/Paywall.ts"
import type { JobRecord } from "../jobs/JobRecord.ts"
import { LibrarySearch } from "../search-index/LibrarySearch.ts"
import { TranscriptAccess } from "../transcripts/TranscriptAccess.ts"
import { ChatAnswerer } from "./ChatAnswerer.ts"
import { ChatStore } from "./ChatStore.ts"

export const signInRequired = () =>
  new SignedInUserOnly({
    error: "Chat about a transcript needs a signed-in user on the website; API keys cannot chat."
  })

/**
 * A question may be longer (1,000 characters) than a search query (500): the search gets its
 * opening, cut at a word; the written answer gets it whole.
 */
export const searchQueryOf = (question: string): string => {
  if (question.length <= searchQueryMaxChars) return question
  const cut = question.slice(0, searchQueryMaxChars)
  const space = cut.lastIndexOf(" ")
  return space > searchQueryMaxChars / 2 ? cut.slice(0, space) : cut
}

/** Relevance of each hit: its score over the best one's (the search's scores compare within one answer only). */
const relative = (score: number, best: number) => best > 0 ? Math.round((score / best) * 1000) / 1000 : 0

export class JobChat extends Context.Service<JobChat, {
  /** `base` is the API root the caller reached (pay links are absolute). */
  ask(
    caller: AccountCaller,
    jobId: JobId,
    question: string,
    base: string
  ): Effect.Effect<ChatMessage, SignedInUserOnly | NotFound | NotReady | PaymentRequired | ValidationFailed>
  history(caller: AccountCaller, jobId: JobId): Effect.Effect<ChatHistory, SignedInUserOnly | NotFound>
}>()("verbatim/chat/JobChat") {
  static readonly layer = Layer.effect(
    JobChat,
    Effect.gen(function*() {
      const access = yield* JobAccess
      const transcripts = yield* TranscriptAccess
      const paywall = yield* Paywall
      const library = yield* LibrarySearch
      const answerer = yield* ChatAnswerer
      const store = yield* ChatStore

      /** The signed-in caller's job; a caller authenticated by an API key is refused first. */
      const signedInJob = Effect.fnUntraced(function*(caller: AccountCaller, jobId: JobId) {
        // A session authenticated the request only when it carries one (API keys carry none).
        if (caller.sessionId === null || caller.sessionId === undefined) return yield* signInRequired()
        return yield* access.load(caller, jobId).pipe(
          Effect.catchTag("ClaimTokenRequired", () => Effect.fail(jobNotFound()))
        )
      })

      const moments = Effect.fnUntraced(function*(caller: AccountCaller, job: JobRecord, question: string) {
        const found = yield* library.readableHits(
          { accountId: caller.account.id, q: searchQueryOf(question), jobIds: [job.id], limit: chatMomentsMax },
          ["body", "question"]
        )
        const best = Math.max(0, ...found.hits.map((hit) => hit.score))
        return found.hits.map((hit): ChatMoment => ({
          start: hit.start,
          end: hit.end,
          text: hit.text,
          speaker: hit.speaker,
          speaker_name: hit.speaker_name,
          relevance: relative(hit.score, best)
        }))
      })

      const ask = Effect.fn("JobChat.ask")(function*(caller: AccountCaller, jobId: JobId, question: string, base: string) {
        const job = yield* signedInJob(caller, jobId)
        yield* transcripts.ready(job)
        if (job.locked) {
          return yield* yield* paywall.transcriptLocked(
            caller.account.id,
            job.audio_duration_seconds ?? 0,
            base,
            "This transcript is locked until the account has credit for it; so is asking about it."
          )
        }
        const asked = question.trim()
        const found = yield* moments(caller, job, asked)
        const answer = yield* answerer.answer(asked, found)
        const at = new Date(yield* Clock.currentTimeMillis)
        const message: ChatMessage = {
          id: crypto.randomUUID(),
          question: asked,
          answer,
          moments: found,
          created_at: Math.floor(at.getTime() / 1000)
        }
        yield* store.add(job.id, caller.account.id, message, at)
        return message
      })

      const history = Effect.fn("JobChat.history")(function*(caller: AccountCaller, jobId: JobId) {
        const job = yield* signedInJob(caller, jobId)
        return { messages: yield* store.list(job.id, caller.account.id) }
      })

      return JobChat.of({ ask, history })
    })
  )
}
