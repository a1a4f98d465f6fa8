/**
 * Finishing touches that make `/openapi.json` say exactly what the server sends:
 * - error bodies without `_tag` (the classes keep it in memory only, see Errors.ts);
 * - the answers of the request edge that every route can give (403 BROWSER_FORBIDDEN for
 *   browsers, 500 SERVICE_ERROR on a defect);
 * - the request guard's answers (src/http/RequestGuard.ts), also on every route: 422 for a NUL or a
 *   lone surrogate in the query string (or in a JSON body), and 413 `BODY_TOO_LARGE` for a body
 *   declared over 1 MiB on any method that can carry one;
 * - response headers (`Retry-After` on every 429, and per endpoint through `responseHeaders`);
 * - the routes served beside the HttpApi (PlainRoutes.ts), and their Bearer security scheme;
 * - one entry per tag (each group adds its tag again; OpenAPI wants tag names unique);
 * - the key optional where a keyless client may call (`AllowGuest`): OpenAPI's empty security
 *   requirement `{}` beside the key's;
 * - a fixed-length tuple whose members share one schema (a `[start, end)` pair) written as
 *   `items` with `minItems` = `maxItems`: the same set of values, and tools that rewrite
 *   `prefixItems` into draft-04 tuples (Schemathesis) then refuse the document.
 */
import { Schema } from "effect"
import { OpenApi } from "effect/http-api"
import { BodyTooLarge, edgeErrors, ValidationFailed } from "./Errors.ts"
import { bearerScheme, type ErrorClass, plainRoutes } from "./PlainRoutes.ts"
import { AllowGuest } from "./Security.ts"

type Json = Record<string, any>

interface HeaderDoc {
  readonly description: string
  readonly schema?: Json
}

const retryAfter: HeaderDoc = {
  description: "Seconds to wait before retrying (the body's `retry_after`).",
  schema: { type: "integer", minimum: 1 }
}

const setHeaders = (response: Json | undefined, headers: Record<string, HeaderDoc>) => {
  if (response === undefined) return
  response["headers"] = {
    ...response["headers"],
    ...Object.fromEntries(
      Object.entries(headers).map(([name, doc]) => [name, { description: doc.description, schema: doc.schema ?? { type: "string" } }])
    )
  }
}

/** Endpoint annotation: response headers by status, e.g. `{ 200: { ETag: { description } } }`. */
export const responseHeaders = (byStatus: Record<number, Record<string, HeaderDoc>>) =>
  OpenApi.annotations({
    transform: (operation) => {
      for (const [status, headers] of Object.entries(byStatus)) setHeaders(operation["responses"]?.[status], headers)
      return operation
    }
  })

/** A `_tag` that is optional in an encoded error schema is the in-memory tag: the wire never has it. */
const dropInMemoryTag = (schema: Json) => {
  const required: ReadonlyArray<string> = schema["required"] ?? []
  if (schema["properties"]?.["_tag"] !== undefined && !required.includes("_tag")) {
    delete schema["properties"]["_tag"]
  }
}

/** An error class as the component HttpApi would generate for it: closed, without the in-memory tag. */
const errorComponent = (error: ErrorClass) => {
  const document = Schema.toJsonSchemaDocument(Schema.toEncoded(error))
  const schema: Json = { ...document.schema, additionalProperties: false }
  dropInMemoryTag(schema)
  return {
    name: `${error.identifier}Encoded`,
    status: String(error.ast.annotations?.["httpApiStatus"]),
    schema
  }
}

const methods = ["get", "put", "post", "delete", "patch", "head", "options"]

/** Answers of the request edge, and which methods can get them. */
const edgeAnswers = [
  ...edgeErrors.map((error) => ({ ...errorComponent(error), methods })),
  { ...errorComponent(ValidationFailed), methods },
  { ...errorComponent(BodyTooLarge), methods: methods.filter((method) => method !== "get" && method !== "head") }
]

/** Adds `ref` as one more body of `status` (an `anyOf` when the operation already has one). */
const addAnswer = (responses: Json, status: string, name: string, ref: Json) => {
  const existing: Json | undefined = responses[status]
  const current: Json | undefined = existing?.["content"]?.["application/json"]?.["schema"]
  const listed: Array<Json> = current === undefined ? [] : current["anyOf"] ?? [current]
  if (listed.some((schema) => schema["$ref"] === ref["$ref"])) return
  responses[status] = {
    ...existing,
    description: existing === undefined ? name : `${existing["description"]} | ${name}`,
    content: {
      ...existing?.["content"],
      "application/json": { schema: listed.length === 0 ? ref : { anyOf: [...listed, ref] } }
    }
  }
}

/** Tags in first-seen order, one entry per name (a later entry's description fills a missing one). */
const uniqueTags = (tags: ReadonlyArray<Json>) => {
  const byName = new Map<string, Json>()
  for (const tag of tags) {
    const seen = byName.get(tag["name"])
    byName.set(tag["name"], seen === undefined ? { ...tag } : { ...tag, ...seen })
  }
  return [...byName.values()]
}

/** What `truthfulDocument` reads of the API it annotates. */
interface ApiGroups {
  readonly groups: Record<string, {
    readonly identifier: string
    readonly endpoints: Record<string, { readonly middlewares: ReadonlySet<unknown> }>
  }>
}

/** `operationId`s (`group.endpoint`, as OpenApi names them) of the endpoints behind `AllowGuest`. */
const guestOperations = (api: ApiGroups) =>
  new Set(Object.values(api.groups).flatMap((group) =>
    Object.entries(group.endpoints)
      .filter(([, endpoint]) => endpoint.middlewares.has(AllowGuest))
      .map(([name]) => `${group.identifier}.${name}`)
  ))

/** Rewrites, in place and at any depth, each tuple of identical members as a same-length array. */
const uniformTuples = (value: unknown): void => {
  if (Array.isArray(value)) return value.forEach(uniformTuples)
  if (value === null || typeof value !== "object") return
  const schema = value as Json
  const members: unknown = schema["prefixItems"]
  if (
    Array.isArray(members) && members.length > 0 && schema["items"] === undefined &&
    schema["minItems"] === members.length && schema["maxItems"] === members.length &&
    members.every((member) => JSON.stringify(member) === JSON.stringify(members[0]))
  ) {
    delete schema["prefixItems"]
    schema["items"] = members[0]
  }
  for (const inner of Object.values(schema)) uniformTuples(inner)
}

/** API annotation applying the rules above to the whole generated document of `api`'s groups. */
export const truthfulDocument = (api: ApiGroups) => OpenApi.annotations({
  transform: (spec) => {
    const guests = guestOperations(api)
    const schemas: Json = spec["components"]["schemas"]
    for (const schema of Object.values(schemas)) dropInMemoryTag(schema)
    const ref = (error: ErrorClass) => {
      const component = errorComponent(error)
      schemas[component.name] ??= component.schema
      return { $ref: `#/components/schemas/${component.name}` }
    }
    Object.assign(spec["paths"], plainRoutes(ref))
    spec["components"]["securitySchemes"] = {
      ...spec["components"]["securitySchemes"],
      [bearerScheme]: {
        type: "http",
        scheme: "bearer",
        description: "The API key as `Authorization: Bearer <key>`: only on `/mcp` and `/v1/audio/transcriptions` / `/v1/audio/translations`."
      }
    }
    for (const edge of edgeAnswers) schemas[edge.name] ??= edge.schema
    for (const path of Object.values(spec["paths"] as Json)) {
      for (const method of methods) {
        const operation: Json | undefined = path[method]
        if (operation === undefined) continue
        const responses: Json = operation["responses"]
        for (const edge of edgeAnswers) {
          if (!edge.methods.includes(method)) continue
          addAnswer(responses, edge.status, edge.name.replace(/Encoded$/, ""), { $ref: `#/components/schemas/${edge.name}` })
        }
        setHeaders(responses["429"], { "Retry-After": retryAfter })
        if (guests.has(operation["operationId"]) && !(operation["security"] ?? []).some((entry: Json) => Object.keys(entry).length === 0)) {
          operation["security"] = [...(operation["security"] ?? []), {}]
        }
      }
    }
    const tags: Array<Json> = [...(spec["tags"] ?? [])]
    for (const path of Object.values(spec["paths"] as Json)) {
      for (const method of methods) {
        for (const name of path[method]?.["tags"] ?? []) tags.push({ name })
      }
    }
    spec["tags"] = uniqueTags(tags)
    uniformTuples(spec["paths"])
    uniformTuples(spec["components"])
    return spec
  }
})
