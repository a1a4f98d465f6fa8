/**
 * A recording's insights (`GET /v1/jobs/{id}/insights`): summary, topics, quotes, speakers and
 * chapters, each with times that play the recording from there. The first request may take a
 * while (the service generates them); a 503 answer is asked again after its `retry_after`.
 */
import { useEffect, useState } from "preact/hooks"
import type { Insights } from "../../contract/domain/Insights.ts"
import { call, toApiError } from "../api.ts"
import { type MediaRef, seekTo } from "./Player.tsx"
import { Busy, ErrorNote } from "./Status.tsx"
import { clock } from "./time.ts"

const TimeButton = ({ media, at }: { readonly media: MediaRef; readonly at: number }) => (
  <button type="button" class="time" onClick={() => seekTo(media, at)} aria-label={`Play from ${clock(at)}`}>{clock(at)}</button>
)

export const InsightsPanel = ({ jobId, media, names, version }: {
  readonly jobId: string
  readonly media: MediaRef
  readonly names: Readonly<Record<string, string>>
  /** Changes when the transcript or names change: the insights are asked again. */
  readonly version: number
}) => {
  const [insights, setInsights] = useState<Insights | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [loading, setLoading] = useState(true)
  useEffect(() => {
    let live = true
    let timer: ReturnType<typeof setTimeout> | undefined
    const load = async (attempt: number) => {
      setLoading(true)
      try {
        const answer = await call((api) => api.insights.get({ params: { job_id: jobId } }))
        if (!live) return
        setInsights(answer.insights)
        setError(undefined)
        setLoading(false)
      } catch (failure) {
        if (!live) return
        const retry = toApiError(failure).body["retry_after"]
        if (typeof retry === "number" && attempt < 10) {
          timer = setTimeout(() => void load(attempt + 1), Math.min(retry, 10) * 1000)
          return
        }
        setError(failure)
        setLoading(false)
      }
    }
    void load(0)
    return () => {
      live = false
      if (timer !== undefined) clearTimeout(timer)
    }
  }, [jobId, version])

  const who = (speaker: string | null, name: string | null) =>
    speaker === null ? undefined : names[speaker] ?? name ?? speaker

  return (
    <section class="card insights" aria-labelledby="insights-title">
      <h2 id="insights-title">Insights</h2>
      {loading && insights === undefined && <Busy label="Reading the recording for its summary, topics and chapters" />}
      <ErrorNote error={error} />
      {insights !== undefined && (
        <>
          {insights.summary.sentences.length > 0 && (
            <>
              <h3>Summary</h3>
              <ul class="timed">
                {insights.summary.sentences.map((sentence, n) => (
                  <li key={n}>
                    <TimeButton media={media} at={sentence.start} />
                    <span>
                      {who(sentence.speaker, sentence.speaker_name) !== undefined && <strong>{who(sentence.speaker, sentence.speaker_name)}: </strong>}
                      {sentence.text}
                    </span>
                  </li>
                ))}
              </ul>
            </>
          )}
          {insights.chapters.length > 0 && (
            <>
              <h3>Chapters</h3>
              <ol class="timed">
                {insights.chapters.map((chapter, n) => (
                  <li key={n}>
                    <TimeButton media={media} at={chapter.start} />
                    <span><strong>{chapter.title}</strong> — {chapter.gist}</span>
                  </li>
                ))}
              </ol>
            </>
          )}
          {insights.topics.length > 0 && (
            <>
              <h3>Topics</h3>
              <ul class="topics">
                {insights.topics.map((topic) => (
                  <li key={topic.phrase}>
                    {topic.occurrences[0] === undefined
                      ? <span class="topic">{topic.phrase}</span>
                      : (
                        <button type="button" class="topic" onClick={() => seekTo(media, topic.occurrences[0]!.start)}
                          aria-label={`${topic.phrase}, said ${topic.count} times; play from ${clock(topic.occurrences[0].start)}`}>
                          {topic.phrase} <span class="muted">×{topic.count}</span>
                        </button>
                      )}
                  </li>
                ))}
              </ul>
            </>
          )}
          {insights.quotes.length > 0 && (
            <>
              <h3>Quotes</h3>
              <ul class="timed">
                {insights.quotes.map((quote, n) => (
                  <li key={n}>
                    <TimeButton media={media} at={quote.start} />
                    <blockquote>
                      “{quote.text}”
                      {who(quote.speaker, quote.speaker_name) !== undefined && <> — {who(quote.speaker, quote.speaker_name)}</>}
                    </blockquote>
                  </li>
                ))}
              </ul>
            </>
          )}
          {insights.speakers.length > 0 && (
            <>
              <h3>Who spoke</h3>
              <ul class="timed">
                {insights.speakers.map((speaker) => (
                  <li key={speaker.label}>
                    <span>
                      <strong>{names[speaker.label] ?? speaker.name ?? speaker.label}</strong>{" "}
                      {Math.round(speaker.share * 100)} % of the talk, {clock(speaker.talk_time)}, {speaker.turns} turns
                    </span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  )
}
