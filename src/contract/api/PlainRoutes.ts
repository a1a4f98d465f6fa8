/**
 * The routes served beside the HttpApi (plain router routes, see layers/App.ts), described for
 * `/openapi.json` so the document lists every path the server answers:
 * - `GET /readyz`, `GET /metrics` (src/http/OpsRoutes.ts);
 * - `POST /v1/audio/transcriptions` and `/v1/audio/translations`, OpenAI's audio API (src/http/OpenAiTranscriptions.ts);
 * - `POST` / `DELETE /mcp`, the Streamable HTTP MCP endpoint (src/http/McpHandlers.ts).
 * Their handlers write these shapes by hand, so they are JSON Schema here; what the request
 * edge adds to every route (403 browsers, 422 query strings, 413 bodies, 500, 503) is added by
 * `truthfulDocument` like for the HttpApi routes. test/contract/openapi-responses.test.ts
 * checks real answers of each against this description.
 */
import type { Schema } from "effect"
import { BodyTooLarge, InvalidApiKey, MalformedRequest, MissingApiKey, NotFound, RateLimited, UnsupportedContentType } from "./Errors.ts"

type Json = Record<string, any>

/** An error class of Errors.ts (its status is its `httpApiStatus` annotation). */
export type ErrorClass = Schema.Codec<unknown, unknown> & { readonly identifier: string }

/** A `$ref` to an error class's component (the caller registers the component). */
export type ErrorRef = (error: ErrorClass) => Json

export const bearerScheme = "bearerKey"

const json = (schema: Json) => ({ "application/json": { schema } })

const closed = (properties: Record<string, Json>, required: ReadonlyArray<string> = Object.keys(properties)) => ({
  type: "object",
  properties,
  required: [...required],
  additionalProperties: false
})

const string = { type: "string" }
const nullableString = { anyOf: [{ type: "string" }, { type: "null" }] }

const readinessCheck = closed({
  name: { type: "string", enum: ["database", "models", "workers", "disk"] },
  ok: { type: "boolean" },
  detail: { ...string, description: "What was found, or what to fix." }
})

/** OpenAI's error body; `code` is the Verbatim code in lower case unless OpenAI has its own. */
const openAiError = closed({
  error: closed({
    message: string,
    type: { type: "string", description: "`invalid_request_error`, `insufficient_quota`, `requests` or `server_error`." },
    code: nullableString,
    param: nullableString
  })
})

const seconds = { type: "number", minimum: 0 }

const verboseJson = closed({
  task: { type: "string", enum: ["transcribe", "translate"] },
  language: string,
  duration: seconds,
  text: string,
  segments: {
    type: "array",
    items: closed({
      id: { type: "integer", minimum: 0 },
      seek: { type: "integer" },
      start: seconds,
      end: seconds,
      text: string,
      tokens: { type: "array", items: { type: "integer" } },
      temperature: { type: "number" },
      avg_logprob: { type: "number" },
      compression_ratio: { type: "number" },
      no_speech_prob: { type: "number" }
    })
  },
  words: { type: "array", items: closed({ word: string, start: seconds, end: seconds }) }
}, ["task", "language", "duration", "text"])

const openAiForm = {
  type: "object",
  properties: {
    file: { type: "string", contentMediaType: "application/octet-stream", description: "The recording (same formats and limits as `POST /v1/transcribe`)." },
    model: { ...string, description: "Required by OpenAI's clients; any value (the server's configured model transcribes)." },
    language: { ...string, description: "ISO-639-1 code, or `auto`." },
    prompt: {
      ...string,
      description: "Names, terms and spelling the recording uses, up to 224 tokens of the model's tokenizer (longer: 400 " +
        "`invalid_value`): Whisper's previous-text prompt before every window, as the job option `prompt`."
    },
    response_format: { type: "string", enum: ["json", "text", "srt", "verbose_json", "vtt"], default: "json" },
    temperature: { type: "number", minimum: 0, maximum: 1, description: "Accepted, not used." },
    "timestamp_granularities[]": { type: "array", items: { type: "string", enum: ["segment", "word"] } }
  },
  required: ["file", "model"]
}

/** `POST /v1/audio/translations`: OpenAI's form without `language` (the source is detected) nor granularities. */
const openAiTranslationForm = {
  ...openAiForm,
  properties: {
    file: openAiForm.properties.file,
    model: openAiForm.properties.model,
    prompt: { ...string, description: "As for transcriptions; in English, as OpenAI advises for translations." },
    response_format: openAiForm.properties.response_format,
    temperature: openAiForm.properties.temperature
  }
}

/** One of OpenAI's audio routes: multipart form in, the transcript (or OpenAI's error body) out. */
const openAiAudio = (operationId: string, summary: string, intro: string, form: object) => ({
  post: {
    tags: ["OpenAI-compatible"],
    operationId,
    summary,
    description: intro + " The key as `Authorization: Bearer`. The file becomes an ordinary job " +
      "(source `api`, charged and listed like any other); the request waits for it to end. Refusals use OpenAI's " +
      "error body with Verbatim's HTTP status.",
    security: [{ [bearerScheme]: [] }],
    requestBody: { required: true, content: { "multipart/form-data": { schema: form } } },
    responses: {
      "200": {
        description: "The transcript in `response_format`",
        headers: { "x-verbatim-job-id": { description: "The job that transcribed the file.", schema: { type: "string", format: "uuid" } } },
        content: {
          "application/json": {
            schema: {
              anyOf: [
                closed({ text: string, usage: closed({ type: { const: "duration" }, seconds: { type: "integer", minimum: 0 } }) }),
                verboseJson
              ]
            }
          },
          "text/plain": { schema: string },
          "application/x-subrip": { schema: string },
          "text/vtt": { schema: string }
        }
      },
      ...Object.fromEntries(
        ([
          [400, "A form field OpenAI would refuse, a body that is not multipart, or a job that failed on its media"],
          [401, "No key, or not a valid one"],
          [402, "No credit, or the transcript is locked"],
          [403, "The account may not do this"],
          [404, "The job was deleted while the request waited"],
          [409, "The transcript is not available"],
          [413, "The file is over the size or duration limit"],
          [415, "Not a supported media file"],
          [422, "A field that cannot be stored"],
          [429, "Rate limit or concurrency cap (with `Retry-After`)"],
          [503, "The job failed for a reason a retry can fix"]
        ] as const).map(([status, description]) => [String(status), { description, content: json(openAiError) }])
      )
    }
  }
})

/** A JSON-RPC 2.0 message as sent by the MCP server (a response, or an error with `id` null when none could be read). */
const jsonRpcMessage = {
  type: "object",
  properties: {
    jsonrpc: { const: "2.0" },
    id: { anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] },
    result: { type: "object" },
    error: {
      type: "object",
      properties: { code: { type: "integer" }, message: string, data: {} },
      required: ["code", "message"]
    }
  },
  required: ["jsonrpc"]
}

const jsonRpcRequest = {
  type: "object",
  properties: {
    jsonrpc: { const: "2.0" },
    id: { anyOf: [{ type: "string" }, { type: "integer" }] },
    method: { ...string, description: "`initialize`, `notifications/initialized`, `tools/list`, `tools/call`, `ping`, …" },
    params: { type: "object" }
  },
  required: ["jsonrpc", "method"]
}

/** The router's own refusal of an `Accept` it cannot serve, in the `{ error, code }` shape. */
const notAcceptable = closed({ error: string, code: { const: "BAD_REQUEST" } })

const sessionHeader = (required: boolean, description: string) => ({
  name: "mcp-session-id",
  in: "header",
  required,
  schema: string,
  description
})

const authenticate = (ref: ErrorRef) => ({
  "401": {
    description: "MissingApiKey | InvalidApiKey",
    headers: { "WWW-Authenticate": { description: "`Bearer realm=\"verbatim\"` (with `error=\"invalid_token\"` for a bad key).", schema: string } },
    content: json({ anyOf: [ref(MissingApiKey), ref(InvalidApiKey)] })
  },
  "429": { description: "RateLimited", content: json(ref(RateLimited)) }
})

/** The path items, keyed by path. */
export const plainRoutes = (ref: ErrorRef): Record<string, Json> => ({
  "/readyz": {
    get: {
      tags: ["System"],
      operationId: "ops.ready",
      summary: "Readiness: database, model files, workers and disk",
      description: "No key. 503 names each failing check, for a load balancer or an operator.",
      security: [],
      responses: {
        "200": { description: "Ready", content: json(closed({ status: { const: "ready" }, checks: { type: "array", items: readinessCheck } })) },
        "503": {
          description: "NotReadyToServe",
          headers: { "Cache-Control": { description: "`no-store`.", schema: string } },
          content: json(closed({
            error: string,
            code: { const: "NOT_READY_TO_SERVE" },
            failing: { type: "array", items: readinessCheck.properties.name },
            checks: { type: "array", items: readinessCheck }
          }))
        }
      }
    }
  },
  "/metrics": {
    get: {
      tags: ["System"],
      operationId: "ops.metrics",
      summary: "Prometheus metrics",
      description: "No key. Served on the API port unless `VERBATIM_METRICS_PORT` moves it to its own port; " +
        "absent with `VERBATIM_METRICS=false` (then 404).",
      security: [],
      responses: {
        "200": { description: "Prometheus text exposition format 0.0.4", content: { "text/plain": { schema: string } } },
        "404": { description: "NotFound (metrics off, or on their own port)", content: json(ref(NotFound)) }
      }
    }
  },
  "/v1/audio/transcriptions": openAiAudio(
    "openai.transcriptions",
    "Transcribe a file, answering like OpenAI's audio API",
    "For OpenAI SDKs and tools.",
    openAiForm
  ),
  "/v1/audio/translations": openAiAudio(
    "openai.translations",
    "Translate a file's speech into English text, answering like OpenAI's audio API",
    "For OpenAI SDKs and tools: Whisper's translate task (needs a multilingual model; 400 on an English-only one). " +
      "The job reports the detected source language (`language` in verbose_json).",
    openAiTranslationForm
  ),
  "/mcp": {
    post: {
      tags: ["MCP"],
      operationId: "mcp.message",
      summary: "Send one MCP (JSON-RPC) message",
      description: "Streamable HTTP MCP transport (protocol revisions 2025-03-26 to 2026-07-28): send `initialize` " +
        "first, then every other message with its `mcp-session-id`. The key as `Authorization: Bearer`. The tools and " +
        "their schemas come from `tools/list`.",
      security: [{ [bearerScheme]: [] }],
      parameters: [
        sessionHeader(false, "The session from the `initialize` answer; required on every later message."),
        { name: "mcp-protocol-version", in: "header", required: false, schema: string },
        {
          name: "accept",
          in: "header",
          required: true,
          schema: { ...string, pattern: "^(?=.*application/json)(?=.*text/event-stream)", example: "application/json, text/event-stream" },
          description: "Must list both `application/json` and `text/event-stream` (else 406)."
        }
      ],
      requestBody: { required: true, content: json(jsonRpcRequest) },
      responses: {
        "200": {
          description: "The JSON-RPC answer (JSON-RPC errors too, e.g. a parse error)",
          headers: {
            "mcp-session-id": { description: "On the `initialize` answer: the new session.", schema: string },
            "mcp-protocol-version": { description: "The negotiated revision.", schema: string }
          },
          content: { "application/json": { schema: jsonRpcMessage }, "text/event-stream": { schema: string } }
        },
        "202": { description: "A notification or response was accepted" },
        "400": {
          description: "A JSON-RPC error (no session, unsupported protocol revision, invalid request) | MalformedRequest (a batch)",
          content: json({ anyOf: [jsonRpcMessage, ref(MalformedRequest)] })
        },
        ...authenticate(ref),
        "404": { description: "NotFound: the session is unknown or ended", content: json(ref(NotFound)) },
        "406": { description: "The Accept header lacks application/json or text/event-stream", content: json(notAcceptable) },
        "413": { description: "BodyTooLarge", content: json(ref(BodyTooLarge)) },
        "415": { description: "UnsupportedContentType (send application/json)", content: json(ref(UnsupportedContentType)) }
      }
    },
    delete: {
      tags: ["MCP"],
      operationId: "mcp.endSession",
      summary: "End an MCP session",
      security: [{ [bearerScheme]: [] }],
      parameters: [sessionHeader(true, "The session to end.")],
      responses: {
        "204": { description: "Ended" },
        "400": { description: "MalformedRequest: no `mcp-session-id`", content: json(ref(MalformedRequest)) },
        ...authenticate(ref),
        "404": { description: "NotFound: the session is unknown or already ended", content: json(ref(NotFound)) }
      }
    }
  }
})
