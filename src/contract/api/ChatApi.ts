/**
 * "Ask this recording" (issue 23; the spec's chat about a transcript): a signed-in person asks a
 * question about one finished job and is answered with the moments that answer it (search
 * inside the job, with times) and, when the operator configured an LLM endpoint, a written
 * answer grounded in and citing those moments. The conversation is kept per job and account.
 * The spec reserves chat to a signed-in user: an API key is refused (403 `SIGN_IN_REQUIRED`).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { jsonBodyErrors, NotFound, NotReady, pathIdErrors, PaymentRequired } from "./Errors.ts"
import { JobIdParam } from "./JobsApi.ts"
import { RequireAccount } from "./Security.ts"
import { SignedInUserOnly } from "./SessionErrors.ts"

export const chatQuestionMaxChars = 1000
/** Moments an answer shows at most. */
export const chatMomentsMax = 5

export const ChatRequest = Schema.Struct({
  question: Schema.String.check(Schema.isBetweenLength(1, chatQuestionMaxChars), Schema.isPattern(/\S/)).annotate({
    description: `1 to ${chatQuestionMaxChars} characters, not only spaces.`
  })
})
export type ChatRequest = typeof ChatRequest.Type

export const ChatMoment = Schema.Struct({
  start: Schema.Number.annotate({ description: "Seconds from the start of the recording." }),
  end: Schema.Number,
  text: Schema.String.annotate({ description: "What is said there, verbatim." }),
  speaker: Schema.NullOr(Schema.String).annotate({ description: "`SPEAKER_<nn>`, or null without diarization." }),
  speaker_name: Schema.NullOr(Schema.String).annotate({ description: "The name given to the speaker, or null." }),
  relevance: Schema.Number.annotate({ description: "0..1, relative to the best moment of this answer (1)." })
})
export type ChatMoment = typeof ChatMoment.Type

export const ChatMessage = Schema.Struct({
  id: Schema.String,
  question: Schema.String,
  answer: Schema.NullOr(Schema.String).annotate({
    description: "Written from the moments by the configured LLM, citing them as `[1]`…`[n]` (`[n]` is " +
      "`moments[n-1]`); null without an LLM endpoint, when it failed, when its answer cited no moment, or when no " +
      "moment was found."
  }),
  moments: Schema.Array(ChatMoment).annotate({
    description: `Up to ${chatMomentsMax} moments of the recording that answer the question, most relevant first.`
  }),
  created_at: Schema.Number.annotate({ description: "Unix seconds." })
})
export type ChatMessage = typeof ChatMessage.Type

export const ChatHistory = Schema.Struct({
  messages: Schema.Array(ChatMessage).annotate({ description: "The caller's questions about this job, oldest first." })
})
export type ChatHistory = typeof ChatHistory.Type

const params = { job_id: JobIdParam }

export class ChatApi extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("ask", "/v1/jobs/:job_id/chat", {
      params,
      payload: ChatRequest,
      success: ChatMessage,
      error: [...pathIdErrors, SignedInUserOnly, NotFound, NotReady, PaymentRequired, ...jsonBodyErrors]
    }).annotateMerge(OpenApi.annotations({
      summary: "Ask this recording",
      description: "Signed-in users only (`Authorization: Bearer` with the website's session token); with an API key " +
        "403 `SIGN_IN_REQUIRED`. Answers with the moments of the job that answer the question (search inside the " +
        "job: it finds a job a moment after it finishes) and, when the service has an LLM endpoint " +
        "(`VERBATIM_LLM_URL`), a written `answer` grounded in those moments. The exchange is kept: " +
        "`GET /v1/jobs/{job_id}/chat` lists it. 409 NOT_READY until the job is done; 402 `transcript_locked` " +
        "for a locked job."
    })),
    HttpApiEndpoint.get("history", "/v1/jobs/:job_id/chat", {
      params,
      success: ChatHistory,
      error: [...pathIdErrors, SignedInUserOnly, NotFound]
    }).annotateMerge(OpenApi.annotations({
      summary: "The conversation about a job",
      description: "The signed-in caller's questions about this job and their answers, oldest first (another " +
        "person's questions are theirs). 403 `SIGN_IN_REQUIRED` with an API key."
    }))
  )
  .middleware(RequireAccount)
  .annotateMerge(OpenApi.annotations({ title: "Chat" }))
{}
