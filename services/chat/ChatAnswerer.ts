/**
 * The written answer of "Ask this recording", from the operator's OpenAI-compatible endpoint
 * (`VERBATIM_LLM_URL`, the insights' LlmClient): the model sees only the question and the
 * numbered moments found in the recording, and must cite them as `[n]`. The answer is kept
 * only when it cites at least one moment and every `[n]` it writes is one of them (grounded in
 * what the person can play); otherwise, or when the endpoint fails, there is no written answer
 * (null) and the moments stand alone. Without an endpoint the answer is always null.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { ChatMoment } from "../../src/contract/api/ChatApi.ts"
import { clockLabel } from "../formats/Timecode.ts"
import { LlmClient, type LlmOptions } from "../insights/LlmClient.ts"

const MAX_ANSWER_CHARS = 2000

const Answer = Schema.Struct({ answer: Schema.String })
const decodeAnswer = Schema.decodeUnknownOption(Answer)

export const answerJsonSchema = {
  type: "object",
  properties: {
    answer: { type: "string", description: "At most 4 sentences, citing the excerpts used as [1], [2]…" }
  },
  required: ["answer"],
  additionalProperties: false
}

const SYSTEM = [
  "You answer a question about one recording, using only the numbered excerpts of its transcript that you are given.",
  "Cite every excerpt you use with its number in square brackets, like [1] or [2][3].",
  "Do not add facts that the excerpts do not state. If they do not answer the question, say so in one sentence.",
  "Answer in at most 4 sentences, in the language of the question. Reply with JSON: {\"answer\": \"…\"}."
].join(" ")

/** `[n] (m:ss–m:ss, Speaker): text`, one line per moment. */
export const excerpts = (moments: ReadonlyArray<ChatMoment>): string =>
  moments.map((m, i) => {
    const who = m.speaker_name ?? m.speaker
    return `[${i + 1}] (${clockLabel(m.start)}–${clockLabel(m.end)}${who === null ? "" : `, ${who}`}): ${m.text}`
  }).join("\n")

/** The answer when it cites at least one of the `count` moments and nothing else; null otherwise. */
export const groundedAnswer = (text: string, count: number): string | null => {
  const answer = text.trim()
  if (answer.length === 0 || answer.length > MAX_ANSWER_CHARS) return null
  const cited = Array.from(answer.matchAll(/\[(\d+)\]/g), (m) => Number(m[1]))
  if (cited.length === 0 || cited.some((n) => n < 1 || n > count)) return null
  return answer
}

export class ChatAnswerer extends Context.Service<ChatAnswerer, {
  /** Whether a written answer can be made at all (an endpoint is configured). */
  readonly enabled: boolean
  answer(question: string, moments: ReadonlyArray<ChatMoment>): Effect.Effect<string | null>
}>()("verbatim/chat/ChatAnswerer") {
  /** `llm` undefined: no endpoint configured, every answer is null. */
  static readonly layer = (llm: LlmOptions | undefined) =>
    Layer.succeed(ChatAnswerer, ChatAnswerer.make(llm === undefined ? undefined : LlmClient.make(llm)))

  static make(client: LlmClient["Service"] | undefined): ChatAnswerer["Service"] {
    if (client === undefined) return ChatAnswerer.of({ enabled: false, answer: () => Effect.succeed(null) })
    const answer = Effect.fn("ChatAnswerer.answer")(function*(question: string, moments: ReadonlyArray<ChatMoment>) {
      if (moments.length === 0) return null
      const reply = yield* client.complete({
        system: SYSTEM,
        user: `Question: ${question}\n\nExcerpts:\n${excerpts(moments)}`,
        schemaName: "recording_answer",
        schema: answerJsonSchema
      }).pipe(
        Effect.tapError((failure) => Effect.logWarning("chat answer failed", { kind: failure.kind, message: failure.message })),
        Effect.option
      )
      if (reply._tag === "None") return null
      const decoded = decodeAnswer(reply.value)
      if (decoded._tag === "None") return null
      const grounded = groundedAnswer(decoded.value.answer, moments.length)
      if (grounded === null) yield* Effect.logWarning("chat answer dropped: it cites no moment or one that was not given")
      return grounded
    })
    return ChatAnswerer.of({ enabled: true, answer })
  }
}
