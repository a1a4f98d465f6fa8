/**
 * Runs the real `verbatim` entry point as a child process (same Node as the tests), for
 * the admin CLI, restarts and multi-process behaviour.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { freePort } from "./ports.ts"
import * as path from "node:path"

export const repoRoot = path.resolve(import.meta.dirname, "../..")
const entry = path.join(repoRoot, "src/main.ts")

/** Only what the test chooses: no stray VERBATIM_* or DATABASE_URL from the caller's shell. */
const cleanEnv = (env: Record<string, string>) => {
  const base: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("VERBATIM_") && name !== "DATABASE_URL") base[name] = value
  }
  return { ...base, ...env }
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runCli = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], { env: cleanEnv(env), cwd: repoRoot })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

export const runCliJson = async <A>(args: ReadonlyArray<string>, env: Record<string, string>): Promise<A> => {
  const result = await runCli(args, env)
  if (result.code !== 0) throw new Error(`verbatim ${args.join(" ")} exited ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout) as A
}

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
  stop(signal?: NodeJS.Signals): Promise<void>
}


/** Starts `verbatim serve` on an OS-assigned port and resolves once it listens. */
export const startServerProcess = async (env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> => {
  const runnerPort = String(await freePort())
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, "serve"], {
      env: cleanEnv({ VERBATIM_PORT: "0", VERBATIM_HOST: "127.0.0.1", VERBATIM_RUNNER_PORT: runnerPort, ...env }),
      cwd: repoRoot
    })
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`server did not start in ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /"msg":"listening","url":"([^"]+)"/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve({
          url: match[1]!,
          child,
          output: () => output,
          stop: (signal = "SIGTERM") =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done()
              child.once("close", () => done())
              child.kill(signal)
            })
        })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.on("close", (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited (${code}) before listening:\n${output}`))
    })
  })
}
