/**
 * `#/jobs/<id>/clips`: the recording's clip candidates by kind (`GET …/clips/candidates?kind=`)
 * with their text and reason; preview a moment in the player (it stops at the moment's end);
 * nudge start and end to the previous or next word (per-word times when the transcript has them,
 * else phrase edges); render with a caption style (`POST /v1/jobs/{id}/clips`), follow the render
 * (`GET /v1/clips/{id}` every second) and watch and download the 9:16 video when it is ready.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import type { Clip } from "../../contract/api/ClipsApi.ts"
import type { CandidateKind, ClipCandidate } from "../../contract/api/SearchApi.ts"
import type { JobView } from "../../contract/domain/Job.ts"
import type { Transcript } from "../../contract/domain/Transcript.ts"
import { call } from "../api.ts"
import { Player, seekTo } from "../components/Player.tsx"
import { Busy, ErrorNote } from "../components/Status.tsx"
import { clock } from "../components/time.ts"
import { useLoad } from "../components/useLoad.ts"

type Kind = CandidateKind | "all"
type Style = Clip["caption_style"]

const kinds: ReadonlyArray<{ readonly value: Kind; readonly label: string }> = [
  { value: "all", label: "All kinds" },
  { value: "hook", label: "Hooks" },
  { value: "quote", label: "Quotes" },
  { value: "question", label: "Questions" },
  { value: "insight", label: "Insights" }
]

const styles: ReadonlyArray<{ readonly value: Style; readonly label: string }> = [
  { value: "karaoke", label: "Karaoke (each word lights up)" },
  { value: "line", label: "Line (one phrase at a time)" },
  { value: "none", label: "No captions" }
]

interface Boundaries {
  readonly starts: ReadonlyArray<number>
  readonly ends: ReadonlyArray<number>
  /** Words (or phrases without per-word times) with their times, to show what the clip says. */
  readonly spoken: ReadonlyArray<{ readonly start: number; readonly end: number; readonly text: string }>
}

/** Where a clip may start and end: word starts and ends, or phrase edges without per-word times. */
const boundariesOf = (transcript: Transcript | undefined): Boundaries => {
  const spoken: Array<{ readonly start: number; readonly end: number; readonly text: string }> = []
  for (const segment of transcript?.segments ?? []) {
    const words = segment.words ?? []
    if (words.length === 0) spoken.push(segment)
    for (const word of words) spoken.push(word)
  }
  const sorted = (values: Array<number>) => [...new Set(values)].sort((a, b) => a - b)
  return { starts: sorted(spoken.map((item) => item.start)), ends: sorted(spoken.map((item) => item.end)), spoken }
}

const previous = (values: ReadonlyArray<number>, at: number) => [...values].reverse().find((value) => value < at - 0.005)
const next = (values: ReadonlyArray<number>, at: number) => values.find((value) => value > at + 0.005)

const Render = ({ clipId }: { readonly clipId: string }) => {
  const [clip, setClip] = useState<Clip | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    let live = true
    let timer: ReturnType<typeof setTimeout> | undefined
    const poll = async () => {
      try {
        const answer = await call((api) => api.clips.get({ params: { clip_id: clipId } }))
        if (!live) return
        setClip(answer)
        if (answer.video_url === null && answer.status !== "failed") timer = setTimeout(poll, 1000)
      } catch (failure) {
        if (live) setError(failure)
      }
    }
    void poll()
    return () => {
      live = false
      if (timer !== undefined) clearTimeout(timer)
    }
  }, [clipId])
  if (error !== undefined) return <ErrorNote error={error} />
  if (clip === undefined) return <Busy label="Starting the render" />
  if (clip.status === "failed") return <p class="error" role="alert">{clip.error ?? "The clip could not be rendered."}</p>
  if (clip.video_url === null) {
    return <Busy label={clip.status === "queued" ? "Waiting to render" : `Rendering: ${Math.round(clip.progress)} %`} value={clip.progress / 100} />
  }
  return (
    <div class="clip-result">
      <video class="clip-video" src={clip.video_url} controls playsInline preload="metadata" aria-label={`Clip ${clock(clip.start_s)} to ${clock(clip.end_s)}`} />
      <p><a href={clip.video_url} download={`clip-${clock(clip.start_s).replace(/:/g, "-")}.mp4`}>Download the video (mp4, 9:16)</a></p>
    </div>
  )
}

const Candidates = ({ jobId, onPreview, onChoose }: {
  readonly jobId: string
  readonly onPreview: (candidate: ClipCandidate) => void
  readonly onChoose: (candidate: ClipCandidate) => void
}) => {
  const [kind, setKind] = useState<Kind>("all")
  const list = useLoad(() => call((api) => api.clipDiscovery.candidates({ params: { job_id: jobId }, query: { kind } })), [jobId, kind])
  return (
    <section class="card" aria-labelledby="candidates-title">
      <div class="row spread">
        <h2 id="candidates-title">Moments worth a clip</h2>
        <label class="inline-label">
          Kind{" "}
          <select value={kind} onChange={(event) => setKind(event.currentTarget.value as Kind)}>
            {kinds.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
          </select>
        </label>
      </div>
      {list.loading && <Busy label="Finding moments" />}
      <ErrorNote error={list.error} />
      {!list.loading && list.data !== undefined && list.data.candidates.length === 0 && (
        <p class="muted">No moment of 10 to 60 seconds stands out{kind === "all" ? "" : ` as a ${kind}`}. Choose the times yourself below.</p>
      )}
      {list.data !== undefined && list.data.candidates.length > 0 && (
        <ol class="candidates">
          {list.data.candidates.map((candidate) => (
            <li key={`${candidate.start}-${candidate.kind}`} class="candidate">
              <p class="candidate-head">
                <span class="tag">{candidate.kind}</span> {clock(candidate.start)}–{clock(candidate.end)}
                <span class="muted"> · {Math.round(candidate.end - candidate.start)} s · score {candidate.score.toFixed(2)}</span>
              </p>
              <p>{candidate.text}</p>
              <p class="hint">{candidate.reason}</p>
              <div class="row">
                <button type="button" onClick={() => onPreview(candidate)}>Preview</button>
                <button type="button" onClick={() => onChoose(candidate)}>Use this moment</button>
              </div>
            </li>
          ))}
        </ol>
      )}
    </section>
  )
}

export const ClipsPage = ({ jobId }: { readonly jobId: string }) => {
  const media = useRef<HTMLMediaElement | null>(null)
  const stopAt = useRef<number | undefined>(undefined)
  const job = useLoad(() => call((api) => api.jobs.get({ params: { job_id: jobId }, headers: {} })) as Promise<JobView>, [jobId])
  const [bounds, setBounds] = useState<Boundaries>({ starts: [], ends: [], spoken: [] })
  const [start, setStart] = useState(0)
  const [end, setEnd] = useState(15)
  const [style, setStyle] = useState<Style>("karaoke")
  const [clipId, setClipId] = useState<string | undefined>(undefined)
  const [creating, setCreating] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const editor = useRef<HTMLElement>(null)
  const ready = job.data?.status === "done"

  useEffect(() => {
    if (!ready) return
    let live = true
    call((api) => api.jobs.result({ params: { job_id: jobId }, query: { format: "json" }, headers: {} }))
      .then((answer) => {
        if (!live || typeof answer !== "object" || answer === null || !("segments" in answer)) return
        const found = boundariesOf(answer)
        setBounds(found)
        const first = found.starts[0] ?? 0
        setStart(first)
        setEnd(found.ends.find((value) => value >= first + 10) ?? found.ends[found.ends.length - 1] ?? first + 10)
      })
      .catch(() => undefined)
    return () => {
      live = false
    }
  }, [jobId, ready])

  useEffect(() => {
    // A preview stops at the end of its moment.
    const element = media.current
    if (element === null) return
    const check = () => {
      if (stopAt.current !== undefined && element.currentTime >= stopAt.current) {
        stopAt.current = undefined
        element.pause()
      }
    }
    element.addEventListener("timeupdate", check)
    return () => element.removeEventListener("timeupdate", check)
  })

  const preview = (from: number, to: number) => {
    stopAt.current = to
    seekTo(media, from)
  }
  const choose = (candidate: ClipCandidate) => {
    setStart(candidate.start)
    setEnd(candidate.end)
    setClipId(undefined)
    editor.current?.scrollIntoView({ behavior: "smooth", block: "start" })
    editor.current?.focus()
  }
  const render = async (event: Event) => {
    event.preventDefault()
    setCreating(true)
    setError(undefined)
    setClipId(undefined)
    try {
      const clip = await call((api) => api.clips.create({ params: { job_id: jobId }, payload: { start_s: start, end_s: end, caption_style: style } }))
      setClipId(clip.clip_id)
    } catch (failure) {
      setError(failure)
    } finally {
      setCreating(false)
    }
  }
  const length = end - start
  const said = bounds.spoken.filter((item) => item.start >= start - 0.005 && item.end <= end + 0.005).map((item) => item.text).join(" ")

  return (
    <>
      <div class="page-head">
        <h1 class="name">Clips{job.data?.filename != null && <> of {job.data.filename}</>}</h1>
        <p class="muted"><a href={`#/jobs/${encodeURIComponent(jobId)}`}>Back to the transcript</a></p>
      </div>
      <ErrorNote error={job.error} />
      {job.loading && job.data === undefined && <Busy label="Loading the recording" />}
      {job.data !== undefined && !ready && <p class="muted">Clips can be made once the recording is transcribed.</p>}
      {ready && (
        <>
          <div class="player-bar">
            <Player jobId={jobId} filename={job.data?.filename ?? null} media={media} label={`Recording: ${job.data?.filename ?? "untitled"}`} />
          </div>
          <section class="card" aria-labelledby="editor-title" ref={editor} tabIndex={-1}>
            <h2 id="editor-title">Your clip</h2>
            <form onSubmit={render}>
              <div class="edges">
                <fieldset>
                  <legend>Start <output data-testid="clip-start">{clock(start, true)}</output></legend>
                  <div class="row">
                    <button type="button" aria-label="Start one word earlier" disabled={previous(bounds.starts, start) === undefined}
                      onClick={() => setStart(previous(bounds.starts, start) ?? start)}>◀ Word</button>
                    <button type="button" aria-label="Start one word later" disabled={(next(bounds.starts, start) ?? end) >= end}
                      onClick={() => setStart(next(bounds.starts, start) ?? start)}>Word ▶</button>
                  </div>
                </fieldset>
                <fieldset>
                  <legend>End <output data-testid="clip-end">{clock(end, true)}</output></legend>
                  <div class="row">
                    <button type="button" aria-label="End one word earlier" disabled={(previous(bounds.ends, end) ?? start) <= start}
                      onClick={() => setEnd(previous(bounds.ends, end) ?? end)}>◀ Word</button>
                    <button type="button" aria-label="End one word later" disabled={next(bounds.ends, end) === undefined}
                      onClick={() => setEnd(next(bounds.ends, end) ?? end)}>Word ▶</button>
                  </div>
                </fieldset>
              </div>
              {said !== "" && <p class="clip-text" data-testid="clip-text">“{said}”</p>}
              <p class={length < 1 || length > 180 ? "error" : "hint"}>
                {length.toFixed(1)} seconds{length < 1 || length > 180 ? " — a clip lasts 1 to 180 seconds." : ""}
              </p>
              <label for="caption-style">Captions</label>
              <select id="caption-style" value={style} onChange={(event) => setStyle(event.currentTarget.value as Style)}>
                {styles.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
              </select>
              <div class="row">
                <button type="button" onClick={() => preview(start, end)}>Preview</button>
                <button type="submit" class="primary" disabled={creating || length < 1 || length > 180}>Render the clip</button>
              </div>
            </form>
            {creating && <Busy label="Sending the clip" />}
            <ErrorNote error={error} />
            {clipId !== undefined && <Render key={clipId} clipId={clipId} />}
          </section>
          <Candidates jobId={jobId} onPreview={(candidate) => preview(candidate.start, candidate.end)} onChoose={choose} />
        </>
      )}
    </>
  )
}
