/**
 * Translates a search question into another language, so that a question in Spanish finds an
 * English recording (and back) through the English-only embedder's own language. Rule-based
 * Apertium, run natively when installed (`apt-get install apertium apertium-eng-spa`): one
 * process pipeline per direction, started on its first question and kept warm (see
 * ApertiumPipeline.ts).
 *
 * Translation is best effort: a direction that is not installed, a pipeline that died or did
 * not answer within `timeoutMillis` gives `undefined`, and the search goes on with the question
 * as asked. A pipeline that timed out is killed and started again on the next question.
 */
import { Context, Effect, Layer } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { modeName, nullFlushPipeline, streamAnswer, streamRequest } from "./ApertiumPipeline.ts"

export class QueryTranslator extends Context.Service<QueryTranslator, {
  /** The directions available, as ISO 639-1 pairs ("es" → "en"). */
  readonly directions: ReadonlyArray<{ readonly from: string; readonly to: string }>
  /** `text` in `to`, or undefined (direction not available, pipeline failed or slow). */
  translate(text: string, from: string, to: string): Effect.Effect<string | undefined>
}>()("verbatim/search/QueryTranslator") {
  /** Debian's Apertium folder: the service's and the library's default. */
  static readonly defaultDir = "/usr/share/apertium"

  /** The setting's layer: `none` → `layerNone`, else Apertium under that folder. */
  static readonly layerFor = (dir: string) => dir === "none" ? QueryTranslator.layerNone : QueryTranslator.layer({ dir })

  /** No translation: questions are searched as asked. */
  static readonly layerNone = Layer.succeed(QueryTranslator, QueryTranslator.of({ directions: [], translate: () => Effect.void.pipe(Effect.as(undefined)) }))

  /**
   * Apertium under `dir` (Debian: /usr/share/apertium, its mode files in `modes/`): the
   * directions whose mode file is there. A direction's pipeline starts on its first question
   * (a server that never gets one never runs it); that first answer waits for the dictionaries
   * (~90 ms quiet), so it gets `startTimeoutMillis`, later ones `timeoutMillis`. A pipeline whose
   * programs exit before their first answer (a broken install) takes its direction out.
   */
  static readonly layer = (options: {
    readonly dir: string
    readonly timeoutMillis?: number
    readonly startTimeoutMillis?: number
  }) =>
    Layer.effect(
      QueryTranslator,
      Effect.gen(function*() {
        const timeoutMillis = options.timeoutMillis ?? 1_000
        const startTimeoutMillis = options.startTimeoutMillis ?? 5_000
        const wanted = [{ from: "es", to: "en" }, { from: "en", to: "es" }]
        const modes = new Map<string, string>()
        if (spawnSync("stdbuf", ["--version"], { stdio: "ignore", timeout: 10_000 }).status === 0) {
          for (const d of wanted) {
            const file = path.join(options.dir, "modes", modeName(d.from, d.to)!)
            if (fs.existsSync(file)) modes.set(`${d.from}-${d.to}`, nullFlushPipeline(fs.readFileSync(file, "utf8")))
          }
        }
        // Kept up to date in place: the service's `directions` is this array.
        const directions = wanted.filter((d) => modes.has(`${d.from}-${d.to}`))
        const pipes = new Map<string, Pipe>()
        yield* Effect.addFinalizer(() => Effect.sync(() => pipes.forEach((p) => p.kill())))

        const translate = Effect.fn("QueryTranslator.translate")(function*(text: string, from: string, to: string) {
          const direction = directions.find((d) => d.from === from && d.to === to)
          if (direction === undefined) return undefined
          const key = `${from}-${to}`
          let pipe = pipes.get(key)
          if (pipe === undefined || !pipe.alive()) {
            pipe = startPipe(modes.get(key)!)
            pipes.set(key, pipe)
          }
          const answer = yield* Effect.promise(() => pipe.ask(text, pipe.answered() ? timeoutMillis : startTimeoutMillis))
          if (answer === undefined && !pipe.answered() && !pipe.alive() && !pipe.killed()) {
            directions.splice(directions.indexOf(direction), 1)
          } else if (answer === undefined) {
            // Slow or stuck: the next question starts it again.
            pipe.kill()
          }
          return answer === "" ? undefined : answer
        })
        return QueryTranslator.of({ directions, translate })
      })
    )
}

interface Pipe {
  /** The translation; undefined when the pipeline died or took longer than `timeoutMillis`. */
  ask(text: string, timeoutMillis: number): Promise<string | undefined>
  alive(): boolean
  /** Whether it has answered a question. */
  answered(): boolean
  /** Whether `kill` ended it (not its own exit). */
  killed(): boolean
  kill(): void
}

/** A running pipeline (`sh -c`); answers are matched to questions by their number. */
const startPipe = (command: string): Pipe => {
  const child = spawn("sh", ["-c", command], { stdio: ["pipe", "pipe", "ignore"], detached: true })
  const waiting = new Map<number, (answer: string | undefined) => void>()
  let next = 0
  let dead = false
  let killed = false
  let answered = false
  let buffered = ""
  const end = () => {
    dead = true
    for (const resolve of waiting.values()) resolve(undefined)
    waiting.clear()
  }
  child.on("error", end)
  child.on("exit", end)
  child.stdin.on("error", end)
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    buffered += chunk
    let at: number
    while ((at = buffered.indexOf("\0")) >= 0) {
      const answer = streamAnswer(buffered.slice(0, at))
      buffered = buffered.slice(at + 1)
      if (answer === undefined) continue
      const resolve = waiting.get(answer.id)
      waiting.delete(answer.id)
      answered = true
      resolve?.(answer.text)
    }
  })
  // The whole process group: `sh` and every stage of the pipeline.
  const kill = () => {
    if (dead) return
    killed = true
    end()
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
    } catch {
      child.kill("SIGKILL")
    }
  }
  return {
    alive: () => !dead,
    answered: () => answered,
    killed: () => killed,
    kill,
    ask: (text, timeoutMillis) =>
      new Promise((resolve) => {
        if (dead) return resolve(undefined)
        const id = next++
        const timer = setTimeout(() => {
          waiting.delete(id)
          resolve(undefined)
        }, timeoutMillis)
        waiting.set(id, (answer) => {
          clearTimeout(timer)
          resolve(answer)
        })
        child.stdin.write(streamRequest(id, text))
      })
  }
}
