/**
 * A poison task: a transcription whose run kills its process (SIGKILL, as an out-of-memory
 * kill or a native crash would) every time. The real service composition runs in a child
 * process (test/work/support/standInServer.ts: the app with the stand-in pipeline, whose
 * `crash` directive kills the process after the first progress report); the test restarts
 * it after every death on the same storage. The stored cluster message is replayed on each
 * start and each replay counts an attempt; after the cap (3) the next start gives the task
 * up and the job ends `failed`, `SERVICE_ERROR`, not retryable (the same recording would kill
 * the process again), with a sentence — instead of
 * looping until the time limit — and nothing is charged.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { defaultMaxAttempts } from "../../services/work/TaskRunner.ts"
import { makeTestStorage, type TestStorage } from "../support/database.ts"
import { eventually, type Job, sleep } from "../support/jobsClient.ts"
import { freePort } from "../support/ports.ts"
import { repoRoot, runCliJson } from "../support/process.ts"
import { tinyWav } from "../support/standInPipeline.ts"

const entry = path.join(repoRoot, "test/work/support/standInServer.ts")
let storage: TestStorage
let env: Record<string, string>
let apiKey: string
const children = new Set<ChildProcess>()

beforeAll(async () => {
  storage = await makeTestStorage("poison-task")
  env = { ...storage.env, VERBATIM_RUNNER_PORT: String(await freePort()) }
  await runCliJson(["admin", "account", "create", "--email", "poison@example.com", "--api-access"], env)
  apiKey = (await runCliJson<{ key: string }>(["admin", "key", "create", "--email", "poison@example.com"], env)).key
  await runCliJson(["admin", "credits", "grant", "--email", "poison@example.com", "--minutes", "10"], env)
}, 120_000)

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL")
  await storage?.dispose()
})

interface Started {
  readonly url: string
  readonly exited: Promise<NodeJS.Signals | null>
  readonly output: () => string
}

const cleanEnv = () => {
  const base: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("VERBATIM_") && name !== "DATABASE_URL") base[name] = value
  }
  return { ...base, ...env, VERBATIM_PORT: "0", VERBATIM_HOST: "127.0.0.1" }
}

/** Starts the stand-in server; resolves once it listens. */
const start = (): Promise<Started> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry], { cwd: repoRoot, env: cleanEnv() })
    children.add(child)
    let output = ""
    const exited = new Promise<NodeJS.Signals | null>((done) =>
      child.once("close", (_code, signal) => {
        children.delete(child)
        done(signal)
      })
    )
    const timer = setTimeout(() => reject(new Error(`no listening line in 90 s:\n${output}`)), 90_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /"msg":"listening","url":"([^"]+)"/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve({ url: match[1]!, exited, output: () => output })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`exited before listening:\n${output}`))
    })
  })

const jobOf = async (url: string, id: string): Promise<Job | undefined> => {
  const response = await fetch(`${url}/v1/jobs/${id}`, { headers: { "X-API-Key": apiKey } }).catch(() => undefined)
  return response?.status === 200 ? (await response.json()) as Job : undefined
}

it("a run that kills its process every time ends failed after the attempt cap, uncharged", async () => {
  let server = await start()
  const form = new FormData()
  form.append("file", new Blob([tinyWav({ crash: true, delayMs: 50, steps: 1 }) as Uint8Array<ArrayBuffer>], { type: "audio/wav" }), "poison.wav")
  const submitted = await fetch(`${server.url}/v1/transcribe`, { method: "POST", headers: { "X-API-Key": apiKey }, body: form })
  expect(submitted.status).toBe(202)
  const { job_id: id } = await submitted.json() as { job_id: string }

  let crashes = 0
  let final: Job | undefined
  for (let start_ = 0; start_ < defaultMaxAttempts + 3 && final === undefined; start_++) {
    // Either the process dies (the run crashed it) or the job ends.
    const outcome = await Promise.race([
      server.exited.then((signal) => ({ died: signal })),
      (async () => {
        while (true) {
          const job = await jobOf(server.url, id)
          if (job?.status === "failed" || job?.status === "done") return { job }
          await sleep(250)
        }
      })()
    ])
    if ("job" in outcome) {
      final = outcome.job
      break
    }
    expect(outcome.died).toBe("SIGKILL")
    crashes++
    server = await start()
  }

  expect(crashes).toBe(defaultMaxAttempts)
  expect(final).toMatchObject({ status: "failed", error_code: "SERVICE_ERROR", retryable: false })
  expect(final!.error).toMatch(/every attempt/)
  // The process that gave the task up keeps running: no more crashes, the job stays failed.
  // The process is still alive after 2 s; then the job is read until an answer comes (a 429 for
  // the loop's fast polling is no answer: the CI Postgres pass once read none at the first try).
  expect(await Promise.race([server.exited.then(() => "exited"), sleep(2_000).then(() => "alive")])).toBe("alive")
  expect(await eventually(() => jobOf(server.url, id), "the job's status after the give-up", 10_000))
    .toMatchObject({ status: "failed", error_code: "SERVICE_ERROR" })

  const exited = server.exited
  for (const child of children) child.kill("SIGTERM")
  await exited
  // Nothing was charged: granting one more minute shows the balance the test started with, plus one.
  const balance = await runCliJson<{ balance_minutes: number }>(
    ["admin", "credits", "grant", "--email", "poison@example.com", "--minutes", "1"],
    env
  )
  expect(balance.balance_minutes).toBe(11)
}, 300_000)
