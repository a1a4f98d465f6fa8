/**
 * Schemathesis-style fuzzing from the document itself (issue 22, item 5): for every operation in
 * `/openapi.json`, fast-check draws requests from what the operation documents — its path and
 * query parameters, header parameters, JSON or multipart body, built from their schemas (enum
 * values, in-range and out-of-range numbers, uuids) and mixed with hostile values (NUL, lone
 * surrogates, wrong types, unknown fields) — sent with a good key, a bad key or none over a
 * real socket. Every answer must be below 500, have a status the operation lists, a listed
 * content type, and a body that validates against that status's schema (openApiCheck.ts).
 * Bounded to 25 requests per operation (about 15 s for 56 operations on a busy machine);
 * FUZZ_RUNS and FUZZ_SEED widen or move the search when exploring by hand.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accepted, submitFile, waitForJob } from "../support/jobsClient.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { makeStandIn, tinyWav } from "../support/standInPipeline.ts"
import { makeChecker } from "../contract/openApiCheck.ts"

type Json = Record<string, any>

let server: TestServer
let key: string
let doneJob: string
let spec: Json
let checker: ReturnType<typeof makeChecker>
const runsPerOperation = Number(process.env["FUZZ_RUNS"] ?? 25)

interface Operation {
  readonly method: string
  readonly path: string
  readonly operation: Json
}
const operations: Array<Operation> = []

beforeAll(async () => {
  server = await startServer("hostile-fuzz-documented", { rateLimitPerMinute: 100_000, batchStatusPerMinute: 100_000, samplesPerDay: 100_000 }, {
    pipeline: makeStandIn({ delayMs: 10, steps: 1 }).layer
  })
  key = (await server.account()).key
  doneJob = (await accepted(await submitFile(server, { key, file: { name: "seed.wav", bytes: tinyWav() } }))).job_id
  expect((await waitForJob(server, key, doneJob)).status).toBe("done")
  spec = await (await fetch(`${server.url}/openapi.json`)).json() as Json
  checker = makeChecker(spec)
  for (const [path, item] of Object.entries(spec["paths"] as Json)) {
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      if ((item as Json)[method] !== undefined) operations.push({ method: method.toUpperCase(), path, operation: (item as Json)[method] })
    }
  }
}, 120_000)
afterAll(async () => {
  await server?.close()
  if (checker !== undefined) console.log(`statuses seen:\n  ${[...checker.covered].sort().join("\n  ")}`)
})

const resolve = (schema: Json): Json =>
  typeof schema["$ref"] === "string" ? resolve(spec["components"]["schemas"][String(schema["$ref"]).split("/").pop()!]) : schema

const hostile = fc.constantFrom<unknown>("\u0000", "a\u0000b", "\ud800", "", "x".repeat(3_000), -1, 1e308, 2 ** 53, null, true, [], {}, "💥")

/** Values the schema allows, with numbers also just outside their bounds. */
const fromSchema = (raw: Json | boolean | undefined, depth = 0): fc.Arbitrary<unknown> => {
  if (raw === undefined || typeof raw === "boolean") return fc.jsonValue({ maxDepth: 2 })
  const schema = resolve(raw)
  const branches = schema["anyOf"] ?? schema["oneOf"]
  if (Array.isArray(branches)) return fc.oneof(...branches.map((branch: Json) => fromSchema(branch, depth)))
  if ("const" in schema) return fc.constant(schema["const"])
  if (Array.isArray(schema["enum"])) return fc.constantFrom(...(schema["enum"] as Array<unknown>))
  const type = Array.isArray(schema["type"]) ? schema["type"][0] : schema["type"]
  switch (type) {
    case "string":
      return schema["format"] === "uuid" ? fc.uuid() : fc.string({ minLength: schema["minLength"] ?? 0, maxLength: Math.min(schema["maxLength"] ?? 30, 30) })
    case "integer":
    case "number": {
      const min = schema["minimum"] ?? schema["exclusiveMinimum"] ?? -1000
      const max = schema["maximum"] ?? schema["exclusiveMaximum"] ?? 1_000_000
      const inRange = fc.integer({ min: Math.max(min, -1e9), max: Math.min(max, 1e9) })
      return fc.oneof(inRange, fc.constantFrom(min - 1, max + 1, 0.5))
    }
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return depth > 3 ? fc.constant([]) : fc.array(fromSchema(schema["items"], depth + 1), { maxLength: 3 })
    case "object": {
      if (depth > 3) return fc.constant({})
      const properties: Json = schema["properties"] ?? {}
      const required = new Set<string>(schema["required"] ?? [])
      return fc.record(
        Object.fromEntries(Object.entries(properties).map(([name, inner]) => [name, fromSchema(inner as Json, depth + 1)])),
        { requiredKeys: Object.keys(properties).filter((name) => required.has(name)) }
      )
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** Mostly what the schema allows, sometimes a hostile value. */
const valueFor = (schema: Json | undefined) => fc.oneof({ arbitrary: fromSchema(schema), weight: 3 }, { arbitrary: hostile, weight: 1 })

const asText = (value: unknown) => typeof value === "string" ? value : JSON.stringify(value) ?? ""
const headerSafe = (value: string) => /^[\x20-\x7e]*$/.test(value) && value.trim() === value

const requestFor = ({ operation }: Operation) => {
  const parameters: Array<Json> = operation["parameters"] ?? []
  const query = parameters.filter((p) => p["in"] === "query")
  const headers = parameters.filter((p) => p["in"] === "header")
  const content: Json = operation["requestBody"]?.["content"] ?? {}
  const bodySchema: Json | undefined = content["application/json"]?.["schema"] ?? content["multipart/form-data"]?.["schema"]
  return fc.record({
    id: fc.oneof(fc.constant("DONE"), fc.uuid(), fc.constantFrom("not-a-uuid", "%00", "x".repeat(200))),
    auth: fc.constantFrom("key", "none", "bad"),
    query: fc.record(
      Object.fromEntries(query.map((p) => [p["name"], valueFor(p["schema"]).map(asText)])) as Record<string, fc.Arbitrary<string>>,
      { requiredKeys: query.filter((p) => p["required"] === true).map((p) => String(p["name"])) as Array<never> }
    ),
    headers: fc.record(
      Object.fromEntries(headers.map((p) => [
        p["name"],
        fc.oneof(
          p["schema"]?.["example"] === undefined ? fromSchema(p["schema"]).map(asText) : fc.constant(String(p["schema"]["example"])),
          fromSchema(p["schema"]).map(asText)
        ).filter(headerSafe)
      ])),
      { requiredKeys: [] }
    ),
    body: bodySchema === undefined
      ? fc.constant(undefined)
      : fc.oneof({ arbitrary: fromSchema(bodySchema), weight: 3 }, { arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), hostile, { maxKeys: 3 }), weight: 1 })
  })
}

const send = async ({ method, operation, path }: Operation, drawn: Json) => {
  const id = drawn["id"] === "DONE" ? doneJob : encodeURIComponent(drawn["id"])
  const query = new URLSearchParams(drawn["query"] as Record<string, string>).toString()
  const url = `${server.url}${path.replace(/\{[^}]+\}/g, id)}${query === "" ? "" : `?${query}`}`
  const headers: Record<string, string> = { ...drawn["headers"] }
  const bearer = (operation["security"] ?? []).some((entry: Json) => "bearerKey" in entry)
  const credential = drawn["auth"] === "key" ? key : drawn["auth"] === "bad" ? "vb_live_not-a-real-key" : undefined
  if (credential !== undefined) {
    if (bearer) headers["Authorization"] = `Bearer ${credential}`
    else headers["X-API-Key"] = credential
  }
  const content: Json = operation["requestBody"]?.["content"] ?? {}
  let body: BodyInit | undefined
  if (content["multipart/form-data"] !== undefined) {
    const form = new FormData()
    for (const [name, value] of Object.entries((drawn["body"] ?? {}) as Json)) {
      if (name === "file") continue
      for (const one of Array.isArray(value) ? value : [value]) form.append(name, asText(one))
    }
    form.append("file", new Blob([tinyWav() as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "fuzz.wav")
    body = form
  } else if (content["application/json"] !== undefined) {
    headers["Content-Type"] = "application/json"
    body = JSON.stringify(drawn["body"] ?? null)
  } else if (content["application/octet-stream"] !== undefined) {
    body = new Uint8Array(16)
  }
  const init: RequestInit = { method, headers, redirect: "manual" }
  if (body !== undefined) init.body = body
  return { url, response: await fetch(url, init) }
}

describe("fuzzing every documented operation", () => {
  it("answers only documented statuses, never 5xx, with bodies that match the document", async () => {
    expect(operations.length).toBeGreaterThan(30)
    const started = performance.now()
    for (const operation of operations) {
      await fc.assert(
        fc.asyncProperty(requestFor(operation), async (drawn) => {
          const { response, url } = await send(operation, drawn as Json)
          expect(response.status, `${operation.method} ${url}`).toBeLessThan(500)
          await checker.check(operation.method, url, response)
        }),
        { numRuns: runsPerOperation, seed: Number(process.env["FUZZ_SEED"] ?? 20261126), endOnFailure: true }
      )
    }
    const seconds = (performance.now() - started) / 1000
    console.log(`fuzzed ${operations.length} operations × ${runsPerOperation} in ${seconds.toFixed(1)} s`)
    // Every operation was reached, and the fuzzer found more than the happy path.
    expect(new Set([...checker.covered].map((name) => name.split(" → ")[0])).size).toBe(operations.length)
    expect([...checker.covered].filter((name) => / → 4\d\d$/.test(name)).length).toBeGreaterThan(operations.length)
  }, 120_000)
})
