/**
 * The transcript by speaker with times. The line (and, with per-word times, the word) being
 * spoken is highlighted as the player plays; a click on a time, a line or a word plays from
 * there. A line's text can be edited: saved as a correction (`PATCH /v1/jobs/{id}/transcript`),
 * which later txt, srt, vtt and docx downloads carry. Everything is rendered as text.
 */
import { memo } from "preact/compat"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import type { Segment, Transcript } from "../../contract/domain/Transcript.ts"
import { call } from "../api.ts"
import { type MediaRef, seekTo, useMediaTime } from "./Player.tsx"
import { Busy, ErrorNote } from "./Status.tsx"
import { activeIndex, clock } from "./time.ts"

interface Playing {
  readonly segment: number
  readonly word: number
}

const samePlaying = (a: Playing, b: Playing) => a.segment === b.segment && a.word === b.word

const normalise = (text: string) => text.replace(/\s+/g, " ").trim()

/** Words are shown one by one only while they still spell the line (a correction replaces the text). */
const wordsOf = (segment: Segment) => {
  const words = segment.words
  if (words === undefined || words.length === 0) return undefined
  return normalise(words.map((word) => word.text).join(" ")) === normalise(segment.text) ? words : undefined
}

export const speakerLabel = (names: Readonly<Record<string, string>>, segment: { readonly speaker: string | null; readonly speaker_name?: string | null | undefined }) =>
  segment.speaker === null ? undefined : names[segment.speaker] ?? segment.speaker_name ?? segment.speaker

// Memoised: while playing only the lines whose highlight changes render again (long transcripts).
const Line = memo(({ jobId, index, segment, playing, word, media, editable, onCorrected }: {
  readonly jobId: string
  readonly index: number
  readonly segment: Segment
  readonly playing: boolean
  readonly word: number
  readonly media: MediaRef
  readonly editable: boolean
  readonly onCorrected: (transcript: Transcript) => void
}) => {
  const [draft, setDraft] = useState<string | undefined>(undefined)
  const editButton = useRef<HTMLButtonElement>(null)
  const field = useRef<HTMLTextAreaElement>(null)
  const editing = draft !== undefined
  const wasEditing = useRef(false)
  useEffect(() => {
    // Keyboard flow: the field takes the focus when editing starts; Edit gets it back after.
    if (editing) field.current?.focus()
    else if (wasEditing.current) editButton.current?.focus()
    wasEditing.current = editing
  }, [editing])
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const words = wordsOf(segment)
  const at = clock(segment.start)

  const save = async (event: Event) => {
    event.preventDefault()
    if (draft === undefined) return
    setSaving(true)
    setError(undefined)
    try {
      const corrected = await call((api) =>
        api.jobs.correct({ params: { job_id: jobId }, payload: { segments: [{ index, text: draft }] }, headers: {} })
      )
      setDraft(undefined)
      onCorrected(corrected)
    } catch (failure) {
      setError(failure)
    } finally {
      setSaving(false)
    }
  }

  return (
    <li class={playing ? "line playing" : "line"} data-index={index} aria-current={playing ? "true" : undefined}>
      <button type="button" class="time" onClick={() => seekTo(media, segment.start)} aria-label={`Play from ${at}`}>
        {at}
      </button>
      {draft === undefined
        ? (
          <p class="text" onClick={(event) => {
            // A click on the line (not on a word, which seeks to itself) plays the line.
            if ((event.target as HTMLElement).closest("button") === null) seekTo(media, segment.start)
          }}>
            {words === undefined
              ? segment.text
              : words.map((item, n) => (
                <>
                  {n > 0 && " "}
                  <button
                    type="button"
                    class={playing && n === word ? "word spoken" : "word"}
                    tabIndex={-1}
                    data-start={item.start}
                    onClick={() => seekTo(media, item.start)}
                  >
                    {item.text}
                  </button>
                </>
              ))}
          </p>
        )
        : (
          <form class="edit" onSubmit={save}>
            <label class="visually-hidden" for={`line-${index}`}>Text of the line at {at}</label>
            <textarea ref={field} id={`line-${index}`} rows={3} value={draft} onInput={(event) => setDraft(event.currentTarget.value)}
              onKeyDown={(event) => {
                if (event.key === "Escape" && !saving) setDraft(undefined)
              }} />
            <div class="row">
              <button type="submit" class="primary" disabled={saving}>Save</button>
              <button type="button" disabled={saving} onClick={() => setDraft(undefined)}>Cancel</button>
            </div>
            {saving && <Busy label="Saving the correction" />}
          </form>
        )}
      {editable && draft === undefined && (
        <button ref={editButton} type="button" class="quiet edit-button" onClick={() => setDraft(segment.text)} aria-label={`Edit the line at ${at}`}>
          Edit
        </button>
      )}
      <ErrorNote error={error} />
    </li>
  )
})

const inView = (element: Element) => {
  const box = element.getBoundingClientRect()
  return box.bottom > 0 && box.top < innerHeight
}

export const TranscriptView = ({ jobId, transcript, names, media, editable, onCorrected }: {
  readonly jobId: string
  readonly transcript: Transcript
  readonly names: Readonly<Record<string, string>>
  readonly media: MediaRef
  readonly editable: boolean
  readonly onCorrected: (transcript: Transcript) => void
}) => {
  const segments = transcript.segments
  const pick = useCallback((t: number): Playing => {
    const segment = activeIndex(segments, t)
    const words = segment >= 0 ? wordsOf(segments[segment]!) : undefined
    return { segment, word: words === undefined ? -1 : activeIndex(words, t) }
  }, [segments])
  const playing = useMediaTime(media, pick, samePlaying)
  const root = useRef<HTMLDivElement>(null)
  const followed = useRef(-1)
  useEffect(() => {
    // While playing, the page follows the spoken line, unless the reader has scrolled away from it.
    const before = followed.current
    followed.current = playing.segment
    if (playing.segment < 0 || media.current === null || media.current.paused || root.current === null) return
    const line = root.current.querySelector(`li.line[data-index="${playing.segment}"]`)
    const previous = before < 0 ? null : root.current.querySelector(`li.line[data-index="${before}"]`)
    if (line !== null && !inView(line) && (previous === null || inView(previous))) {
      line.scrollIntoView({ block: "center", behavior: "smooth" })
    }
  }, [playing.segment])

  if (segments.length === 0) {
    return <p class="muted">{transcript.speech_detected ? "The transcript is empty." : "No speech was found in this recording."}</p>
  }
  // Turns: consecutive lines of one speaker under one heading.
  const turns: Array<{ readonly speaker: string | undefined; readonly lines: Array<number> }> = []
  segments.forEach((segment, index) => {
    const speaker = segment.speaker ?? undefined
    const last = turns[turns.length - 1]
    if (last !== undefined && last.speaker === speaker) last.lines.push(index)
    else turns.push({ speaker, lines: [index] })
  })
  return (
    <div class="transcript" ref={root}>
      {turns.map((turn) => (
        <section key={turn.lines[0]} class="turn">
          {turn.speaker !== undefined && (
            <h3 class="speaker" data-speaker={turn.speaker}>{speakerLabel(names, segments[turn.lines[0]!]!)}</h3>
          )}
          <ol class="lines">
            {turn.lines.map((index) => (
              <Line
                key={index}
                jobId={jobId}
                index={index}
                segment={segments[index]!}
                playing={playing.segment === index}
                word={playing.segment === index ? playing.word : -1}
                media={media}
                editable={editable}
                onCorrected={onCorrected}
              />
            ))}
          </ol>
        </section>
      ))}
    </div>
  )
}
