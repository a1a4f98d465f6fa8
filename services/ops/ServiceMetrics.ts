/**
 * What `/metrics` reports, in Prometheus text. Request counts and latencies are recorded as
 * requests end (`recordRequest`); the job, task, audio and process figures are read when
 * scraped (`render`), from the database every process shares, so any process answers for
 * the whole service:
 * - `verbatim_http_requests_total{route,method,status}`, `verbatim_http_request_duration_seconds{route}`
 * - `verbatim_jobs{status}`, `verbatim_queue_depth`
 * - `verbatim_tasks{kind,status}` (the task engine's rows: outcome per kind)
 * - `verbatim_audio_transcribed_seconds` (done jobs with speech), `verbatim_real_time_factor`
 *   (processing time over audio duration, mean of the last 50 done jobs)
 * - `process_*` / `nodejs_*`: memory, CPU, uptime, event-loop delay.
 */
import { Context, Effect, Layer, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { monitorEventLoopDelay } from "node:perf_hooks"

const latencyBoundaries = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]

const requests = Metric.counter("verbatim_http_requests_total", {
  description: "HTTP requests answered, by route, method and status",
  incremental: true
})
const latency = Metric.histogram("verbatim_http_request_duration_seconds", {
  description: "HTTP request latency by route",
  boundaries: latencyBoundaries
})
const jobs = Metric.gauge("verbatim_jobs", { description: "Jobs (not deleted) by status" })
const queueDepth = Metric.gauge("verbatim_queue_depth", { description: "Jobs queued and not yet processing" })
const tasks = Metric.gauge("verbatim_tasks", { description: "Task engine tasks by kind and status (outcome)" })
const audioSeconds = Metric.gauge("verbatim_audio_transcribed_seconds", {
  description: "Audio seconds in jobs that ended done with speech"
})
const realTimeFactor = Metric.gauge("verbatim_real_time_factor", {
  description: "Processing wall time over audio duration, mean of the last 50 done jobs (below 1 is faster than real time)"
})
const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Resident set size" })
const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use" })
const cpuSeconds = Metric.gauge("process_cpu_seconds_total", { description: "User and system CPU time" })
const startTime = Metric.gauge("process_start_time_seconds", { description: "Process start, Unix seconds" })
const loopDelay = Metric.gauge("nodejs_eventloop_delay_p99_seconds", { description: "Event-loop delay, 99th percentile" })

/** Route labels stay few: ids become `:id`, and past this many distinct routes the rest are `other`. */
const maxRoutes = 200
const idSegment = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z]+_[A-Za-z0-9]{8,}|[A-Za-z0-9_-]{24,}|\d+)$/i

export class ServiceMetrics extends Context.Service<ServiceMetrics, {
  recordRequest(request: { readonly method: string; readonly path: string; readonly status: number; readonly seconds: number }): Effect.Effect<void>
  readonly render: Effect.Effect<string>
}>()("verbatim/ops/ServiceMetrics") {
  static readonly layer = Layer.effect(
    ServiceMetrics,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const routes = new Set<string>()
      const delay = monitorEventLoopDelay({ resolution: 20 })
      delay.enable()
      yield* Effect.addFinalizer(() => Effect.sync(() => delay.disable()))

      const routeOf = (path: string) => {
        const route = path.split("/").map((segment) => idSegment.test(segment) ? ":id" : segment).join("/") || "/"
        if (routes.has(route)) return route
        if (routes.size >= maxRoutes) return "other"
        routes.add(route)
        return route
      }

      const recordRequest = Effect.fn("ServiceMetrics.recordRequest")(function*(request: {
        readonly method: string
        readonly path: string
        readonly status: number
        readonly seconds: number
      }) {
        const route = routeOf(request.path)
        yield* Metric.update(Metric.withAttributes(requests, { route, method: request.method, status: String(request.status) }), 1)
        yield* Metric.update(Metric.withAttributes(latency, { route }), request.seconds)
      })

      const fromDatabase = Effect.gen(function*() {
        const byStatus = yield* sql<{ status: string; n: number }>`
          SELECT status, count(*)::int AS n FROM jobs WHERE deleted_at IS NULL GROUP BY status`
        const counts = new Map(byStatus.map((row) => [row.status, row.n]))
        for (const status of ["queued", "processing", "done", "failed"]) {
          yield* Metric.update(Metric.withAttributes(jobs, { status }), counts.get(status) ?? 0)
        }
        yield* Metric.update(queueDepth, counts.get("queued") ?? 0)
        const byTask = yield* sql<{ kind: string; status: string; n: number }>`
          SELECT kind, status, count(*)::int AS n FROM tasks GROUP BY kind, status`
        for (const row of byTask) yield* Metric.update(Metric.withAttributes(tasks, { kind: row.kind, status: row.status }), row.n)
        const [audio] = yield* sql<{ seconds: number | null; rtf: number | null }>`
          SELECT
            (SELECT sum(audio_duration_seconds)::float8 FROM jobs WHERE status = 'done' AND speech_detected) AS seconds,
            (SELECT avg(EXTRACT(EPOCH FROM (completed_at - started_at)) / audio_duration_seconds)::float8 FROM (
              SELECT completed_at, started_at, audio_duration_seconds FROM jobs
              WHERE status = 'done' AND started_at IS NOT NULL AND audio_duration_seconds > 0
              ORDER BY completed_at DESC LIMIT 50) recent) AS rtf`
        yield* Metric.update(audioSeconds, audio?.seconds ?? 0)
        if (audio?.rtf !== null && audio?.rtf !== undefined) yield* Metric.update(realTimeFactor, audio.rtf)
      }).pipe(
        // A scrape during a database outage still answers, with the process figures.
        Effect.catchCause((cause) => Effect.logWarning("metrics: database figures unavailable", cause))
      )

      const fromProcess = Effect.gen(function*() {
        const memory = process.memoryUsage()
        const cpu = process.cpuUsage()
        yield* Metric.update(residentMemory, memory.rss)
        yield* Metric.update(heapUsed, memory.heapUsed)
        yield* Metric.update(cpuSeconds, (cpu.user + cpu.system) / 1e6)
        yield* Metric.update(startTime, Math.round(Date.now() / 1000 - process.uptime()))
        yield* Metric.update(loopDelay, delay.percentile(99) / 1e9)
      })

      const render = Effect.andThen(Effect.all([fromDatabase, fromProcess], { discard: true }), PrometheusMetrics.format())
      return ServiceMetrics.of({ recordRequest, render })
    })
  )
}
