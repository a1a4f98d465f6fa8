/**
 * `#/jobs/<id>` (optionally `?t=<seconds>`, which plays from there): the recording's page.
 * While the job is queued or processing: its status and progress, refreshed every 2 seconds.
 * Once done: the player on the playback link, the transcript by speaker with the spoken line
 * and word highlighted, speaker names, corrections, downloads, insights and "Ask this
 * recording". A locked transcript shows its preview (the json result's opening) and the pay link.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import type { JobSpeaker } from "../../contract/api/SpeakersApi.ts"
import type { JobView } from "../../contract/domain/Job.ts"
import type { Transcript } from "../../contract/domain/Transcript.ts"
import { call } from "../api.ts"
import { AskRecording } from "../components/AskRecording.tsx"
import { Downloads } from "../components/Downloads.tsx"
import { InsightsPanel } from "../components/InsightsPanel.tsx"
import { Player } from "../components/Player.tsx"
import { SpeakerNames } from "../components/SpeakerNames.tsx"
import { Busy, ErrorNote } from "../components/Status.tsx"
import { hashTime } from "../components/time.ts"
import { TranscriptView } from "../components/TranscriptView.tsx"
import { duration } from "../format.ts"

const isTranscript = (value: unknown): value is Transcript =>
  typeof value === "object" && value !== null && Array.isArray((value as { segments?: unknown }).segments)

/** The speakers of a transcript when the speakers endpoint cannot say (labels in order of appearance). */
const speakersOf = (transcript: Transcript): ReadonlyArray<JobSpeaker> => {
  const seen = new Map<string, string | null>()
  for (const segment of transcript.segments) {
    if (segment.speaker !== null && !seen.has(segment.speaker)) seen.set(segment.speaker, segment.speaker_name ?? null)
  }
  return [...seen].map(([label, name]) => ({ label, name, source: name === null ? null : "user" }))
}

const useJob = (jobId: string) => {
  const [job, setJob] = useState<JobView | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    let live = true
    let timer: ReturnType<typeof setTimeout> | undefined
    const load = async () => {
      try {
        const answer = await call((api) => api.jobs.get({ params: { job_id: jobId }, headers: {} }))
        if (!live) return
        if (answer !== undefined && answer !== null) setJob(answer as JobView)
        setError(undefined)
        const status = (answer as JobView | undefined)?.status
        if (status === "queued" || status === "processing") timer = setTimeout(load, 2000)
      } catch (failure) {
        if (live) setError(failure)
      }
    }
    setJob(undefined)
    void load()
    return () => {
      live = false
      if (timer !== undefined) clearTimeout(timer)
    }
  }, [jobId])
  return { job, error }
}

const Waiting = ({ job }: { readonly job: JobView }) => (
  <section class="card" aria-labelledby="wait-title">
    <h2 id="wait-title">{job.status === "queued" ? "Waiting to be transcribed" : "Transcribing"}</h2>
    {job.status === "queued"
      ? <Busy label={job.queue_position > 0 ? `Queued, ${job.queue_position} ahead` : "Queued, starting soon"} />
      : <Busy label={`Transcribing: ${Math.round(job.progress)} %`} value={job.progress / 100} />}
    <p class="hint">This page updates by itself; the transcript appears here when it is ready.</p>
  </section>
)

const Done = ({ job }: { readonly job: JobView }) => {
  const media = useRef<HTMLMediaElement | null>(null)
  const [transcript, setTranscript] = useState<Transcript | undefined>(undefined)
  const [speakers, setSpeakers] = useState<ReadonlyArray<JobSpeaker>>([])
  const [error, setError] = useState<unknown>(undefined)
  const [version, setVersion] = useState(0)
  const [start, setStart] = useState<number | undefined>(() => hashTime())

  useEffect(() => {
    // `?t=` may change while the page is open (a search hit of the same recording).
    const update = () => setStart(hashTime())
    addEventListener("hashchange", update)
    return () => removeEventListener("hashchange", update)
  }, [])

  useEffect(() => {
    let live = true
    call((api) => api.jobs.result({ params: { job_id: job.job_id }, query: { format: "json" }, headers: {} }))
      .then(async (answer) => {
        if (!live) return
        if (!isTranscript(answer)) throw new Error("The transcript could not be read.")
        setTranscript(answer)
        if (job.locked) return setSpeakers(speakersOf(answer))
        const named = await call((api) => api.speakers.list({ params: { job_id: job.job_id }, headers: {} }))
          .then((list) => list.speakers, () => speakersOf(answer))
        if (live) setSpeakers(named)
      })
      .catch((failure) => live && setError(failure))
    return () => {
      live = false
    }
  }, [job.job_id, job.locked])

  const corrected = useCallback((next: Transcript) => {
    setTranscript(next)
    setVersion((n) => n + 1)
  }, [])

  const names: Record<string, string> = {}
  for (const speaker of speakers) if (speaker.name !== null) names[speaker.label] = speaker.name

  return (
    <>
      {job.locked && (
        <section class="card locked" aria-labelledby="locked-title">
          <h2 id="locked-title">This transcript is locked</h2>
          <p>
            The recording finished while the account had no minutes left. Below is a preview of its opening; add minutes to
            read all of it, download it and see its insights.
          </p>
          <p>
            {job.unlock_url !== undefined
              ? <a class="button primary" href={job.unlock_url} target="_blank" rel="noopener">Unlock the transcript</a>
              : <a class="button primary" href="#/balance">Add minutes</a>}
          </p>
        </section>
      )}
      <div class="player-bar">
        <Player jobId={job.job_id} filename={job.filename} media={media} start={start} label={`Recording: ${job.filename ?? "untitled"}`} />
      </div>
      <section class="card" aria-labelledby="text-title">
        <h2 id="text-title">{job.locked ? "Transcript preview" : "Transcript"}</h2>
        <ErrorNote error={error} />
        {transcript === undefined && error === undefined && <Busy label="Loading the transcript" />}
        {transcript !== undefined && (
          <TranscriptView
            jobId={job.job_id}
            transcript={transcript}
            names={names}
            media={media}
            editable={!job.locked}
            onCorrected={corrected}
          />
        )}
      </section>
      {!job.locked && (
        <>
          <SpeakerNames jobId={job.job_id} speakers={speakers} onSaved={(saved) => {
            setSpeakers(saved)
            setVersion((n) => n + 1)
          }} />
          <Downloads jobId={job.job_id} filename={job.filename} />
          <AskRecording jobId={job.job_id} media={media} names={names} />
          <InsightsPanel jobId={job.job_id} media={media} names={names} version={version} />
        </>
      )}
    </>
  )
}

export const TranscriptPage = ({ jobId }: { readonly jobId: string }) => {
  const { job, error } = useJob(jobId)
  return (
    <>
      <div class="page-head">
        <h1 id="transcript-title" class="name">{job?.filename ?? "Recording"}</h1>
        <p class="muted">
          {job !== undefined && <>{duration(job.audio_duration_seconds)} · {job.language ?? "language not known yet"} · {job.source} · </>}
          <a href="#/library">Library</a>
          {job?.status === "done" && !job.locked && <> · <a href={`#/jobs/${encodeURIComponent(jobId)}/clips`}>Make clips</a></>}
        </p>
      </div>
      <ErrorNote error={error} />
      {job === undefined && error === undefined && <Busy label="Loading the recording" />}
      {job !== undefined && (job.status === "queued" || job.status === "processing") && <Waiting job={job} />}
      {job?.status === "failed" && (
        <section class="card">
          <h2>Transcription failed</h2>
          <p class="error" role="alert">{job.error ?? "The recording could not be transcribed."}</p>
        </section>
      )}
      {job?.status === "done" && <Done key={job.job_id} job={job} />}
    </>
  )
}
