/**
 * Finishing touches that make `/openapi.json` say exactly what the server sends:
 * - error bodies without `_tag` (the classes keep it in memory only, see Errors.ts);
 * - the answers of the request edge that every route can give (403 BROWSER_FORBIDDEN for
 *   browsers, 500 SERVICE_ERROR on a defect);
 * - response headers (`Retry-After` on every 429, and per endpoint through `responseHeaders`).
 */
import { Schema } from "effect"
import { OpenApi } from "effect/http-api"
import { edgeErrors } from "./Errors.ts"

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

const edgeComponents = edgeErrors.map((error) => {
  const document = Schema.toJsonSchemaDocument(Schema.toEncoded(error))
  // Same closed shape as the components HttpApi generates for the other errors.
  const schema: Json = { ...document.schema, additionalProperties: false }
  dropInMemoryTag(schema)
  return {
    name: `${error.identifier}Encoded`,
    status: String(error.ast.annotations?.["httpApiStatus"]),
    schema
  }
})

const methods = ["get", "put", "post", "delete", "patch", "head", "options"]

/** API annotation applying the rules above to the whole generated document. */
export const truthfulDocument = OpenApi.annotations({
  transform: (spec) => {
    const schemas: Json = spec["components"]["schemas"]
    for (const schema of Object.values(schemas)) dropInMemoryTag(schema)
    for (const edge of edgeComponents) schemas[edge.name] = edge.schema
    for (const path of Object.values(spec["paths"] as Json)) {
      for (const method of methods) {
        const operation: Json | undefined = path[method]
        if (operation === undefined) continue
        const responses: Json = operation["responses"]
        for (const edge of edgeComponents) {
          const ref = { $ref: `#/components/schemas/${edge.name}` }
          const existing: Json | undefined = responses[edge.status]
          const current = existing?.["content"]?.["application/json"]?.["schema"]
          responses[edge.status] = {
            description: existing === undefined ? edge.name.replace(/Encoded$/, "") : `${existing["description"]} | ${edge.name.replace(/Encoded$/, "")}`,
            content: {
              ...existing?.["content"],
              "application/json": {
                schema: current === undefined ? ref : { anyOf: [...(current["anyOf"] ?? [current]), ref] }
              }
            }
          }
        }
        setHeaders(responses["429"], { "Retry-After": retryAfter })
      }
    }
    return spec
  }
})
