/**
 * Downloads of a transcript in every format. A plain link would not carry the session's
 * `Authorization` header, so each download is fetched with it and saved from a Blob.
 */
import type { TranscriptFormat } from "../../contract/domain/Transcript.ts"
import { ApiError, authHeaders, toApiError } from "../api.ts"
import { Busy, ErrorNote } from "./Status.tsx"
import { useAction } from "./useAction.ts"

const formats: ReadonlyArray<{ readonly format: TranscriptFormat; readonly label: string }> = [
  { format: "txt", label: "Text (.txt)" },
  { format: "srt", label: "Subtitles (.srt)" },
  { format: "vtt", label: "Web subtitles (.vtt)" },
  { format: "docx", label: "Word (.docx)" },
  { format: "json", label: "JSON" }
]

/** The name the file is saved under: the recording's name without its extension, plus the format's. */
const fileName = (recording: string | null, format: TranscriptFormat) => {
  const base = (recording ?? "transcript").replace(/\.[^./\\]{1,8}$/, "").replace(/[\\/:*?"<>|\u0000-\u001f]/g, "_")
  return `${base === "" ? "transcript" : base}.${format}`
}

const fetchResult = async (jobId: string, format: TranscriptFormat): Promise<Blob> => {
  let answer: Response
  try {
    answer = await fetch(`/v1/jobs/${encodeURIComponent(jobId)}/result?format=${format}`, { headers: authHeaders() })
  } catch {
    throw toApiError(undefined)
  }
  if (!answer.ok) {
    const body: unknown = await answer.json().catch(() => undefined)
    throw body === undefined ? new ApiError(`The download was refused (HTTP ${answer.status}).`, undefined) : toApiError(body)
  }
  return answer.blob()
}

const save = (blob: Blob, name: string) => {
  const url = URL.createObjectURL(blob)
  const link = document.createElement("a")
  link.href = url
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

export const Downloads = ({ jobId, filename }: { readonly jobId: string; readonly filename: string | null }) => {
  const { busy, error, run } = useAction<TranscriptFormat>()
  const download = (format: TranscriptFormat) => run(format, async () => save(await fetchResult(jobId, format), fileName(filename, format)))
  return (
    <section class="card" aria-labelledby="downloads-title">
      <h2 id="downloads-title">Download</h2>
      <div class="row">
        {formats.map(({ format, label }) => (
          <button key={format} type="button" disabled={busy !== undefined} onClick={() => download(format)}>
            {label}
          </button>
        ))}
      </div>
      {busy !== undefined && <Busy label={`Preparing the ${busy} file`} />}
      <ErrorNote error={error} />
    </section>
  )
}
