/**
 * "Ask this recording" (`POST /v1/jobs/{id}/chat`): a question, answered with the moments of
 * the recording that answer it (times that play from there) and, when the service has an LLM,
 * a written answer citing them as [1]…[n] (each citation plays its moment). The earlier
 * questions (`GET /v1/jobs/{id}/chat`) are shown first.
 */
import { useEffect, useState } from "preact/hooks"
import type { ChatMessage } from "../../contract/api/ChatApi.ts"
import { call } from "../api.ts"
import { type MediaRef, seekTo } from "./Player.tsx"
import { Busy, ErrorNote } from "./Status.tsx"
import { clock } from "./time.ts"

/** The written answer with each `[n]` as a button playing moment n. */
const Answer = ({ message, media }: { readonly message: ChatMessage; readonly media: MediaRef }) => {
  if (message.answer === null) return null
  const parts = message.answer.split(/(\[\d+\])/)
  return (
    <p class="answer">
      {parts.map((part, n) => {
        const cited = /^\[(\d+)\]$/.exec(part)
        const moment = cited === null ? undefined : message.moments[Number(cited[1]) - 1]
        return moment === undefined
          ? part
          : (
            <button key={n} type="button" class="cite" onClick={() => seekTo(media, moment.start)}
              aria-label={`Source ${cited![1]}: play from ${clock(moment.start)}`}>
              {part}
            </button>
          )
      })}
    </p>
  )
}

const Exchange = ({ message, media, names }: {
  readonly message: ChatMessage
  readonly media: MediaRef
  readonly names: Readonly<Record<string, string>>
}) => (
  <li class="exchange">
    <p class="question"><strong>You asked:</strong> {message.question}</p>
    <Answer message={message} media={media} />
    {message.moments.length === 0
      ? <p class="muted">No moment of the recording answers this.</p>
      : (
        <ol class="moments timed">
          {message.moments.map((moment, n) => {
            const speaker = moment.speaker === null ? undefined : names[moment.speaker] ?? moment.speaker_name ?? moment.speaker
            return (
              <li key={n}>
                <button type="button" class="time" onClick={() => seekTo(media, moment.start)} aria-label={`Play from ${clock(moment.start)}`}>
                  {clock(moment.start)}
                </button>
                <span>{speaker !== undefined && <strong>{speaker}: </strong>}{moment.text}</span>
              </li>
            )
          })}
        </ol>
      )}
  </li>
)

export const AskRecording = ({ jobId, media, names }: {
  readonly jobId: string
  readonly media: MediaRef
  readonly names: Readonly<Record<string, string>>
}) => {
  const [messages, setMessages] = useState<ReadonlyArray<ChatMessage>>([])
  const [historyError, setHistoryError] = useState<unknown>(undefined)
  const [question, setQuestion] = useState("")
  const [asking, setAsking] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    let live = true
    call((api) => api.chat.history({ params: { job_id: jobId } }))
      .then((answer) => live && setMessages(answer.messages))
      .catch((failure) => live && setHistoryError(failure))
    return () => {
      live = false
    }
  }, [jobId])

  const ask = async (event: Event) => {
    event.preventDefault()
    if (question.trim() === "") return
    setAsking(true)
    setError(undefined)
    try {
      const answer = await call((api) => api.chat.ask({ params: { job_id: jobId }, payload: { question } }))
      setMessages((all) => [...all, answer])
      setQuestion("")
    } catch (failure) {
      setError(failure)
    } finally {
      setAsking(false)
    }
  }

  return (
    <section class="card" aria-labelledby="ask-title">
      <h2 id="ask-title">Ask this recording</h2>
      <ErrorNote error={historyError} />
      {messages.length > 0 && <ol class="exchanges">{messages.map((message) => <Exchange key={message.id} message={message} media={media} names={names} />)}</ol>}
      <form class="row" onSubmit={ask}>
        <label class="visually-hidden" for="ask-question">Your question about this recording</label>
        <input id="ask-question" maxLength={1000} placeholder="What did they decide about…?" value={question}
          onInput={(event) => setQuestion(event.currentTarget.value)} />
        <button type="submit" class="primary" disabled={asking || question.trim() === ""}>Ask</button>
      </form>
      {asking && <Busy label="Looking for the moments that answer it" />}
      <ErrorNote error={error} />
    </section>
  )
}
