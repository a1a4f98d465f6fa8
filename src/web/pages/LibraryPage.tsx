/**
 * The library: the account's jobs newest first, filtered by status, refreshed every 3 seconds
 * while any is queued or processing; new recordings on top; delete with undo; the recently
 * deleted jobs (restorable for 24 hours) under their own tab.
 */
import { useEffect, useState } from "preact/hooks"
import type { JobListStatus } from "../../contract/api/JobsApi.ts"
import type { JobView } from "../../contract/domain/Job.ts"
import { call } from "../api.ts"
import { AddRecordings } from "../components/AddRecordings.tsx"
import { Busy, ErrorNote } from "../components/Status.tsx"
import { useLoad } from "../components/useLoad.ts"
import { duration, when } from "../format.ts"

type Filter = "all" | Exclude<JobListStatus, "deleted">

const filters: ReadonlyArray<{ readonly value: Filter; readonly label: string }> = [
  { value: "all", label: "All" },
  { value: "queued", label: "Queued" },
  { value: "processing", label: "Processing" },
  { value: "done", label: "Done" },
  { value: "failed", label: "Failed" }
]

const speakersText = (job: JobView) =>
  job.diarization === null ? "–" : job.diarization === "done" ? "labelled" : job.diarization

const StatusCell = ({ job }: { readonly job: JobView }) => (
  <span class={`status status-${job.status}`}>
    {job.status}
    {job.status === "queued" && job.queue_position > 0 && <> · {job.queue_position} ahead</>}
    {job.status === "processing" && (
      <progress class="inline" max={100} value={job.progress} aria-label={`Progress ${Math.round(job.progress)} %`} />
    )}
    {job.locked && <> · locked</>}
  </span>
)

const JobRow = ({ job, onDelete }: { readonly job: JobView; readonly onDelete: (job: JobView) => void }) => (
  <li class="job" data-job-id={job.job_id}>
    <div class="job-main">
      <a class="name" href={`#/jobs/${job.job_id}`}>{job.filename ?? "Untitled recording"}</a>
      <StatusCell job={job} />
    </div>
    <div class="job-foot">
      <dl class="facts">
        <div><dt>Duration</dt><dd>{duration(job.audio_duration_seconds)}</dd></div>
        <div><dt>Language</dt><dd>{job.language ?? "–"}</dd></div>
        <div><dt>Speakers</dt><dd>{speakersText(job)}</dd></div>
        <div><dt>Source</dt><dd>{job.source}</dd></div>
        <div><dt>Added</dt><dd>{when(job.created_at)}</dd></div>
      </dl>
      <button type="button" class="quiet" onClick={() => onDelete(job)} aria-label={`Delete ${job.filename ?? "recording"}`}>
        Delete
      </button>
    </div>
    {job.status === "failed" && job.error !== null && <p class="error">{job.error}</p>}
  </li>
)

const Jobs = ({ refresh }: { readonly refresh: number }) => {
  const [filter, setFilter] = useState<Filter>("all")
  const [undo, setUndo] = useState<JobView | undefined>(undefined)
  const [actionError, setActionError] = useState<unknown>(undefined)
  const list = useLoad(
    () => call((api) => api.jobList.list({ query: filter === "all" ? { limit: 100 } : { limit: 100, status: filter } })),
    [filter]
  )
  useEffect(() => {
    if (refresh > 0) void list.reload()
  }, [refresh])
  const active = list.data?.jobs.some((job) => job.status === "queued" || job.status === "processing") ?? false
  useEffect(() => {
    if (!active) return
    // Every 3 seconds (the API's advice for polling), and not while the tab is hidden.
    const timer = setInterval(() => {
      if (!document.hidden) void list.reload()
    }, 3000)
    return () => clearInterval(timer)
  }, [active, list.reload])
  useEffect(() => {
    if (undo === undefined) return
    const timer = setTimeout(() => setUndo(undefined), 15_000)
    return () => clearTimeout(timer)
  }, [undo])

  const remove = async (job: JobView) => {
    setActionError(undefined)
    try {
      await call((api) => api.jobs.remove({ params: { job_id: job.job_id }, headers: {} }))
      setUndo(job)
      await list.reload()
    } catch (error) {
      setActionError(error)
    }
  }
  const restore = async (job: JobView) => {
    setActionError(undefined)
    try {
      await call((api) => api.jobs.restore({ params: { job_id: job.job_id }, headers: {} }))
      setUndo(undefined)
      await list.reload()
    } catch (error) {
      setActionError(error)
    }
  }

  return (
    <section class="card" aria-labelledby="jobs-title">
      <div class="row spread">
        <h2 id="jobs-title">Recordings</h2>
        <label class="inline-label">
          Status{" "}
          <select value={filter} onChange={(event) => setFilter(event.currentTarget.value as Filter)}>
            {filters.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
          </select>
        </label>
      </div>
      {undo !== undefined && (
        <div class="toast" role="status">
          Deleted “{undo.filename ?? "recording"}”.{" "}
          <button type="button" onClick={() => restore(undo)}>Undo</button>
        </div>
      )}
      <ErrorNote error={actionError} />
      <ErrorNote error={list.error} />
      {list.loading && list.data === undefined && <Busy label="Loading your recordings" />}
      {list.data !== undefined && list.data.jobs.length === 0 && (
        <p class="muted">{filter === "all" ? "No recordings yet. Add one above." : `No ${filter} recordings.`}</p>
      )}
      {list.data !== undefined && list.data.jobs.length > 0 && (
        <ul class="jobs">{list.data.jobs.map((job) => <JobRow key={job.job_id} job={job} onDelete={remove} />)}</ul>
      )}
    </section>
  )
}

const Deleted = () => {
  const [actionError, setActionError] = useState<unknown>(undefined)
  const list = useLoad(() => call((api) => api.jobList.list({ query: { status: "deleted", limit: 100 } })), [])
  const restore = async (job: JobView) => {
    setActionError(undefined)
    try {
      await call((api) => api.jobs.restore({ params: { job_id: job.job_id }, headers: {} }))
      await list.reload()
    } catch (error) {
      setActionError(error)
    }
  }
  return (
    <section class="card" aria-labelledby="deleted-title">
      <h2 id="deleted-title">Recently deleted</h2>
      <p class="muted">Deleted recordings can be restored for 24 hours; after that they are removed for good.</p>
      <ErrorNote error={actionError} />
      <ErrorNote error={list.error} />
      {list.loading && list.data === undefined && <Busy label="Loading deleted recordings" />}
      {list.data !== undefined && list.data.jobs.length === 0 && <p class="muted">Nothing was deleted recently.</p>}
      {list.data !== undefined && list.data.jobs.length > 0 && (
        <ul class="jobs">
          {list.data.jobs.map((job) => (
            <li class="job" key={job.job_id} data-job-id={job.job_id}>
              <div class="job-main">
                <span class="name">{job.filename ?? "Untitled recording"}</span>
                <span class="muted">deleted {when(job.deleted_at)} · restorable until {when(job.restorable_until)}</span>
              </div>
              <div class="actions">
                <button type="button" onClick={() => restore(job)}>Restore</button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

export const LibraryPage = ({ view }: { readonly view: "jobs" | "deleted" }) => {
  const [added, setAdded] = useState(0)
  return (
    <>
      <nav class="tabs" aria-label="Library views">
        <a href="#/library" aria-current={view === "jobs" ? "page" : undefined}>Recordings</a>
        <a href="#/library/deleted" aria-current={view === "deleted" ? "page" : undefined}>Recently deleted</a>
      </nav>
      {view === "jobs"
        ? (
          <>
            <AddRecordings onAdded={() => setAdded((n) => n + 1)} />
            <Jobs refresh={added} />
          </>
        )
        : <Deleted />}
    </>
  )
}
