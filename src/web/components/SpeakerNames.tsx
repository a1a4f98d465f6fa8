/**
 * Naming a recording's speakers (`PATCH /v1/jobs/{id}/speakers`): one field per diarization
 * label; the names carry into the downloads, the insights and search. An emptied field forgets
 * the name (null).
 */
import { useEffect, useState } from "preact/hooks"
import type { JobSpeaker } from "../../contract/api/SpeakersApi.ts"
import { call } from "../api.ts"
import { Busy, ErrorNote } from "./Status.tsx"

export const SpeakerNames = ({ jobId, speakers, onSaved }: {
  readonly jobId: string
  readonly speakers: ReadonlyArray<JobSpeaker>
  readonly onSaved: (speakers: ReadonlyArray<JobSpeaker>) => void
}) => {
  const [drafts, setDrafts] = useState<Record<string, string>>({})
  const [saving, setSaving] = useState(false)
  const [saved, setSaved] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  useEffect(() => {
    setDrafts(Object.fromEntries(speakers.map((speaker) => [speaker.label, speaker.name ?? ""])))
  }, [speakers])

  const save = async (event: Event) => {
    event.preventDefault()
    setSaving(true)
    setSaved(false)
    setError(undefined)
    const names: Record<string, string | null> = {}
    for (const speaker of speakers) {
      const draft = (drafts[speaker.label] ?? "").trim()
      if (draft !== (speaker.name ?? "")) names[speaker.label] = draft === "" ? null : draft
    }
    try {
      const answer = await call((api) => api.speakers.rename({ params: { job_id: jobId }, payload: { names }, headers: {} }))
      setSaved(true)
      onSaved(answer.speakers)
    } catch (failure) {
      setError(failure)
    } finally {
      setSaving(false)
    }
  }

  if (speakers.length === 0) return null
  return (
    <section class="card" aria-labelledby="speakers-title">
      <h2 id="speakers-title">Speakers</h2>
      <form onSubmit={save}>
        {speakers.map((speaker) => (
          <div class="row" key={speaker.label}>
            <label class="speaker-field" for={`speaker-${speaker.label}`}>
              {speaker.label}
              {speaker.source === "detected" && <span class="hint"> (name heard in the recording)</span>}
            </label>
            <input
              id={`speaker-${speaker.label}`}
              maxLength={80}
              placeholder="Name"
              value={drafts[speaker.label] ?? ""}
              onInput={(event) => {
                const value = event.currentTarget.value
                setSaved(false)
                setDrafts((all) => ({ ...all, [speaker.label]: value }))
              }}
            />
          </div>
        ))}
        <button type="submit" class="primary" disabled={saving}>Save names</button>
        {saving && <Busy label="Saving the names" />}
        {saved && <p class="ok" role="status">Names saved. Downloads, insights and search use them now.</p>}
        <ErrorNote error={error} />
      </form>
    </section>
  )
}
