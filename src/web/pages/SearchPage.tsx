/**
 * `#/search?q=…`: one box over the whole library (`POST /v1/library/search`). Each hit shows the
 * recording, the speaker, the time and the passage with the words that matched highlighted (the
 * hit's `highlights` ranges, drawn as text with <mark>); it links to the transcript page playing
 * from that moment (`#/jobs/<id>?t=<seconds>`). The question lives in the hash, so a search can
 * be bookmarked and the back button returns to it.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import type { LibrarySearchAnswer, SearchHit } from "../../contract/api/SearchApi.ts"
import { call } from "../api.ts"
import { Busy, ErrorNote } from "../components/Status.tsx"
import { clock } from "../components/time.ts"
import { navigate } from "../router.ts"

/** The passage cut at the highlight ranges (clamped, sorted, overlaps merged) into plain and marked runs. */
export const passageRuns = (text: string, highlights: ReadonlyArray<readonly [number, number]>) => {
  const ranges = highlights
    .map(([from, to]) => [Math.max(0, Math.min(from, text.length)), Math.max(0, Math.min(to, text.length))] as const)
    .filter(([from, to]) => to > from)
    .sort((a, b) => a[0] - b[0])
  const merged: Array<[number, number]> = []
  for (const [from, to] of ranges) {
    const last = merged[merged.length - 1]
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to)
    else merged.push([from, to])
  }
  const runs: Array<{ readonly text: string; readonly marked: boolean }> = []
  let at = 0
  for (const [from, to] of merged) {
    if (from > at) runs.push({ text: text.slice(at, from), marked: false })
    runs.push({ text: text.slice(from, to), marked: true })
    at = to
  }
  if (at < text.length) runs.push({ text: text.slice(at), marked: false })
  return runs
}

const Hit = ({ hit }: { readonly hit: SearchHit }) => {
  const speaker = hit.speaker_name ?? hit.speaker
  const href = `#/jobs/${encodeURIComponent(hit.job_id)}?t=${Math.round(hit.start * 100) / 100}`
  return (
    <li class="hit">
      <a href={href} class="hit-link">
        <span class="hit-head">
          <span class="name">{hit.filename ?? "Untitled recording"}</span>
          <span class="muted">{speaker !== null && <>{speaker} · </>}{clock(hit.start)}</span>
        </span>
        <span class="passage">
          {passageRuns(hit.text, hit.highlights).map((run, n) => (run.marked ? <mark key={n}>{run.text}</mark> : run.text))}
        </span>
      </a>
    </li>
  )
}

export const SearchPage = ({ query }: { readonly query: string }) => {
  const [draft, setDraft] = useState(query)
  const [answer, setAnswer] = useState<LibrarySearchAnswer | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  // Asking the same question again searches again (a recording may have finished meanwhile).
  const [again, setAgain] = useState(0)

  const shown = useRef(query)
  useEffect(() => {
    // The box follows the hash only when the hash's question changes (back button, a link): on
    // the page's first render, or a repeated search, it keeps what the person is typing.
    if (shown.current !== query) {
      shown.current = query
      setDraft(query)
    }
  }, [query])

  useEffect(() => {
    if (query.trim() === "") {
      setAnswer(undefined)
      return
    }
    let live = true
    setBusy(true)
    setError(undefined)
    call((api) => api.librarySearch.search({ payload: { q: query, limit: 20 } }))
      .then((found) => live && setAnswer(found))
      .catch((failure) => live && setError(failure))
      .finally(() => live && setBusy(false))
    return () => {
      live = false
    }
  }, [query, again])

  const submit = (event: Event) => {
    event.preventDefault()
    const q = draft.trim()
    if (q === query) setAgain((n) => n + 1)
    else if (q !== "") navigate(`#/search?q=${encodeURIComponent(q)}`)
  }

  return (
    <section class="card" aria-labelledby="search-title">
      <h1 id="search-title">Search</h1>
      <form class="row" role="search" onSubmit={submit}>
        <label class="visually-hidden" for="search-q">Search all your recordings</label>
        <input id="search-q" type="search" maxLength={500} placeholder="What was said about the budget?" value={draft}
          onInput={(event) => setDraft(event.currentTarget.value)} />
        <button type="submit" class="primary" disabled={draft.trim() === ""}>Search</button>
      </form>
      <p class="hint">Ask in your own words; matches by meaning and by the words themselves, across every finished transcript.</p>
      {busy && <Busy label="Searching your library" />}
      <ErrorNote error={error} />
      {!busy && answer !== undefined && answer.hits.length === 0 && <p class="muted">Nothing in your library matches “{query}”.</p>}
      {answer !== undefined && answer.hits.length > 0 && (
        <>
          <p class="muted" role="status">{answer.hits.length} {answer.hits.length === 1 ? "moment" : "moments"} found</p>
          <ol class="hits">{answer.hits.map((hit, n) => <Hit key={`${hit.job_id}-${hit.start}-${n}`} hit={hit} />)}</ol>
        </>
      )}
    </section>
  )
}
