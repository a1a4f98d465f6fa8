/**
 * Checks real HTTP answers against the service's own `/openapi.json` with a JSON-Schema
 * validator (Ajv, draft 2020-12 as OpenAPI 3.1 uses): the status must be listed for the
 * operation, the content type must be one it lists, and the body must validate against
 * that response's schema. Bodyless responses (204, 304) must be empty.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"

type Json = Record<string, any>

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void

const docId = "https://verbatim.invalid/openapi.json"

const pointer = (...parts: Array<string>) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")

export interface Checked {
  readonly status: number
  readonly headers: Headers
  /** Parsed JSON, text, or bytes, per the content type. */
  readonly body: any
  readonly operation: string
}

export const makeChecker = (spec: Json) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema({ ...spec, $id: docId })
  const routes = Object.entries(spec["paths"] as Json).map(([template, operations]) => ({
    template,
    regex: new RegExp("^" + template.replace(/\{[^}]+\}/g, "[^/]+") + "$"),
    operations: operations as Json
  }))
  const covered = new Set<string>()

  const operationOf = (method: string, url: string) => {
    const pathname = new URL(url).pathname
    // A literal path wins over a templated one (`/v1/jobs/status` over `/v1/jobs/{job_id}`).
    const matches = routes.filter((route) => route.regex.test(pathname) && route.operations[method] !== undefined)
    const route = matches.find((r) => !r.template.includes("{")) ?? matches[0]
    if (route === undefined) throw new Error(`${method.toUpperCase()} ${pathname}: no operation in /openapi.json`)
    return { template: route.template, operation: route.operations[method] as Json }
  }

  /** Validates one answer; throws with a readable message on any mismatch. */
  const check = async (method: string, url: string, response: Response): Promise<Checked> => {
    const m = method.toLowerCase()
    const { template, operation } = operationOf(m, url)
    const name = `${m.toUpperCase()} ${template} → ${response.status}`
    const bytes = new Uint8Array(await response.arrayBuffer())
    const text = new TextDecoder().decode(bytes)
    const listed = operation["responses"] as Json
    const answer: Json | undefined = listed[String(response.status)]
    if (answer === undefined) {
      throw new Error(`${name}: status not listed (listed: ${Object.keys(listed).join(", ")}); body: ${text.slice(0, 400)}`)
    }
    covered.add(name)
    const content: Json | undefined = answer["content"]
    if (content === undefined) {
      if (bytes.length > 0) throw new Error(`${name}: documented without a body, but got ${text.slice(0, 200)}`)
      return { status: response.status, headers: response.headers, body: undefined, operation: name }
    }
    const contentType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim()
    if (content[contentType] === undefined) {
      throw new Error(`${name}: content type ${contentType} not listed (listed: ${Object.keys(content).join(", ")})`)
    }
    const isJson = contentType === "application/json"
    const body = isJson ? JSON.parse(text) : contentType.startsWith("text/") || contentType.includes("subrip") ? text : bytes
    const ref = `${docId}#/${pointer("paths", template, m, "responses", String(response.status), "content", contentType, "schema")}`
    const validate = ajv.getSchema(ref)
    if (validate === undefined) throw new Error(`${name}: schema ${ref} did not compile`)
    if (isJson || typeof body === "string") {
      if (!validate(body)) {
        throw new Error(`${name}: body does not match the documented schema: ${ajv.errorsText(validate.errors)}\nbody: ${text.slice(0, 600)}`)
      }
    }
    return { status: response.status, headers: response.headers, body, operation: name }
  }

  return { check, covered }
}
