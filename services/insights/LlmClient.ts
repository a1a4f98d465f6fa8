/**
 * A thin client for an OpenAI-compatible chat endpoint (Ollama, llama.cpp server, vLLM,
 * LM Studio): one `POST {url}/chat/completions` per call, temperature 0, the answer constrained
 * by `response_format: { type: "json_schema", json_schema: { name, strict: true, schema } }`,
 * and the message content parsed as JSON.
 *
 * `url` is the API root (`http://localhost:11434/v1`); a URL already ending in
 * `/chat/completions` is used as is. `apiKey`, when set, is sent as `Authorization: Bearer`.
 * Each call (request and body) is bounded by `timeoutMs` (default 120 s).
 *
 * Failures are `LlmFailure` with a `kind`:
 * - `timeout`, `unreachable`, `status` 5xx or 429: retryable;
 * - `status` 4xx otherwise: not retryable (a configuration error: wrong model, key, URL);
 * - `malformed`: the endpoint answered 200 without a JSON message content.
 */
import { Context, Effect, Layer, Schema } from "effect"

export interface LlmOptions {
  readonly url: string
  readonly model: string
  readonly apiKey?: string
  readonly timeoutMs?: number
}

export interface ChatRequest {
  readonly system: string
  readonly user: string
  /** Name and JSON Schema of the expected answer. */
  readonly schemaName: string
  readonly schema: Readonly<Record<string, unknown>>
}

export class LlmFailure extends Schema.TaggedError<LlmFailure>()("LlmFailure", {
  kind: Schema.Literals(["timeout", "unreachable", "status", "malformed"]),
  status: Schema.optionalKey(Schema.Int),
  message: Schema.String
}) {
  get retryable(): boolean {
    if (this.kind === "timeout" || this.kind === "unreachable") return true
    return this.kind === "status" && this.status !== undefined && (this.status >= 500 || this.status === 429)
  }
}

const ChatAnswer = Schema.Struct({
  choices: Schema.NonEmptyArray(Schema.Struct({
    message: Schema.Struct({ content: Schema.NullOr(Schema.String) })
  }))
})
const decodeChatAnswer = Schema.decodeUnknownEffect(Schema.fromJsonString(ChatAnswer))

export const DEFAULT_TIMEOUT_MS = 120_000

const endpoint = (url: string) => {
  const trimmed = url.replace(/\/+$/, "")
  return trimmed.endsWith("/chat/completions") ? trimmed : `${trimmed}/chat/completions`
}

/** JSON of a message content, tolerating a Markdown code fence around it. */
const parseContent = (content: string): unknown => JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ""))

export class LlmClient extends Context.Service<LlmClient, {
  readonly model: string
  /** The parsed JSON answer; decoding it against its Schema is the caller's job. */
  complete(request: ChatRequest): Effect.Effect<unknown, LlmFailure>
}>()("verbatim/insights/LlmClient") {
  static layer(options: LlmOptions) {
    return Layer.succeed(LlmClient, LlmClient.make(options))
  }

  static make(options: LlmOptions): LlmClient["Service"] {
    const url = endpoint(options.url)
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" }
    if (options.apiKey !== undefined && options.apiKey.length > 0) headers.authorization = `Bearer ${options.apiKey}`

    const complete = Effect.fn("LlmClient.complete")(function*(request: ChatRequest) {
      const body = JSON.stringify({
        model: options.model,
        temperature: 0,
        stream: false,
        messages: [{ role: "system", content: request.system }, { role: "user", content: request.user }],
        response_format: {
          type: "json_schema",
          json_schema: { name: request.schemaName, strict: true, schema: request.schema }
        }
      })
      const { status, text } = yield* Effect.tryPromise({
        try: async (signal) => {
          const response = await fetch(url, {
            method: "POST",
            headers,
            body,
            signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
          })
          return { status: response.status, text: await response.text() }
        },
        catch: (cause) => {
          const name = cause instanceof Error ? cause.name : ""
          return name === "TimeoutError"
            ? new LlmFailure({ kind: "timeout", message: `no answer from the LLM endpoint within ${timeoutMs} ms` })
            : new LlmFailure({ kind: "unreachable", message: cause instanceof Error ? cause.message : String(cause) })
        }
      })
      if (status < 200 || status >= 300) {
        return yield* new LlmFailure({ kind: "status", status, message: `LLM endpoint answered ${status}: ${text.slice(0, 200)}` })
      }
      const answer = yield* decodeChatAnswer(text).pipe(
        Effect.mapError(() => new LlmFailure({ kind: "malformed", message: "the answer is not a chat completion" }))
      )
      const content = answer.choices[0].message.content
      if (content === null) return yield* new LlmFailure({ kind: "malformed", message: "the answer has no content" })
      return yield* Effect.try({
        try: () => parseContent(content),
        catch: () => new LlmFailure({ kind: "malformed", message: "the message content is not JSON" })
      })
    })

    return LlmClient.of({ model: options.model, complete })
  }
}
