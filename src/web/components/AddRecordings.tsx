/**
 * Ways into the library: drop or pick several files (a progress bar each), paste a link, or
 * record in the browser. Each new job is announced through `onAdded` so the list refreshes.
 */
import { useRef, useState } from "preact/hooks"
import { call, messageOf } from "../api.ts"
import { bytes } from "../format.ts"
import { directUploadBytes, siteJobOptions, uploadFile } from "../uploads.ts"
import { Recorder } from "./Recorder.tsx"
import { Busy, ErrorNote } from "./Status.tsx"

interface Sending {
  readonly key: number
  readonly name: string
  readonly size: number
  readonly progress: number
  readonly state: "sending" | "queued" | "failed"
  readonly error?: string
  readonly jobId?: string
}

let nextKey = 0

export const AddRecordings = ({ onAdded }: { readonly onAdded: () => void }) => {
  const [sending, setSending] = useState<ReadonlyArray<Sending>>([])
  const [dragging, setDragging] = useState(false)
  const [link, setLink] = useState("")
  const [linkBusy, setLinkBusy] = useState(false)
  const [linkError, setLinkError] = useState<unknown>(undefined)
  const picker = useRef<HTMLInputElement>(null)

  const update = (key: number, change: Partial<Sending>) =>
    setSending((all) => all.map((item) => (item.key === key ? { ...item, ...change } : item)))

  const send = (files: ReadonlyArray<File>) => {
    for (const file of files) {
      const key = ++nextKey
      setSending((all) => [{ key, name: file.name, size: file.size, progress: 0, state: "sending" }, ...all])
      uploadFile(file, (progress) => update(key, { progress }))
        .then((answer) => {
          update(key, { state: "queued", progress: 1, jobId: answer.job_id })
          onAdded()
        })
        .catch((error: unknown) => update(key, { state: "failed", error: messageOf(error) }))
    }
  }

  const submitLink = async (event: Event) => {
    event.preventDefault()
    setLinkBusy(true)
    setLinkError(undefined)
    try {
      await call((api) => api.submit.url({ payload: { url: link.trim(), ...siteJobOptions }, headers: {} }))
      setLink("")
      onAdded()
    } catch (error) {
      setLinkError(error)
    } finally {
      setLinkBusy(false)
    }
  }

  return (
    <section class="card add" aria-labelledby="add-title">
      <h2 id="add-title">Add recordings</h2>
      <div
        class={dragging ? "drop dragging" : "drop"}
        onDragOver={(event) => {
          event.preventDefault()
          setDragging(true)
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault()
          setDragging(false)
          send(Array.from(event.dataTransfer?.files ?? []))
        }}
      >
        <p>Drop audio or video files here, or</p>
        <button type="button" onClick={() => picker.current?.click()}>Choose files</button>
        <input
          ref={picker}
          type="file"
          multiple
          accept="audio/*,video/*"
          class="visually-hidden"
          aria-label="Choose files to transcribe"
          data-testid="file-input"
          onChange={(event) => {
            const input = event.currentTarget
            send(Array.from(input.files ?? []))
            input.value = ""
          }}
        />
        <p class="hint">Files over {bytes(directUploadBytes)} go through the direct upload (up to 5 GB).</p>
      </div>
      {sending.length > 0 && (
        <ul class="uploads" aria-label="Uploads">
          {sending.map((item) => (
            <li key={item.key}>
              <span class="name">{item.name}</span> <span class="muted">{bytes(item.size)}</span>
              {item.state === "sending" && <Busy label={`Uploading ${Math.round(item.progress * 100)} %`} value={item.progress} />}
              {item.state === "queued" && <span class="ok"> sent — {item.jobId !== undefined && <a href={`#/jobs/${item.jobId}`}>open</a>}</span>}
              {item.state === "failed" && <p class="error" role="alert">{item.error}</p>}
            </li>
          ))}
        </ul>
      )}
      <form class="row" onSubmit={submitLink}>
        <label for="link">Or paste a link</label>
        <input
          id="link"
          type="url"
          required
          minLength={8}
          placeholder="https://… (a media file, podcast episode or feed)"
          value={link}
          onInput={(event) => setLink(event.currentTarget.value)}
        />
        <button type="submit" disabled={linkBusy}>Transcribe link</button>
      </form>
      {linkBusy && <Busy label="Sending the link" />}
      <ErrorNote error={linkError} />
      <Recorder onAdded={onAdded} />
    </section>
  )
}
