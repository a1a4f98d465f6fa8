/** Record in the browser (MediaRecorder) and send the take as a job with `source: recording`. */
import { useEffect, useRef, useState } from "preact/hooks"
import { duration } from "../format.ts"
import { uploadMultipart } from "../uploads.ts"
import { Busy, ErrorNote } from "./Status.tsx"

type State =
  | { readonly step: "idle" }
  | { readonly step: "recording"; readonly started: number }
  | { readonly step: "sending"; readonly progress: number }

const preferredType = () =>
  ["audio/webm;codecs=opus", "audio/webm", "audio/ogg;codecs=opus", "audio/mp4"].find((type) =>
    typeof MediaRecorder !== "undefined" && MediaRecorder.isTypeSupported(type)
  )

export const Recorder = ({ onAdded }: { readonly onAdded: () => void }) => {
  const [state, setState] = useState<State>({ step: "idle" })
  const [error, setError] = useState<unknown>(undefined)
  const [now, setNow] = useState(Date.now())
  const recorder = useRef<MediaRecorder | null>(null)

  useEffect(() => {
    if (state.step !== "recording") return
    const timer = setInterval(() => setNow(Date.now()), 500)
    return () => clearInterval(timer)
  }, [state.step])

  useEffect(() => () => recorder.current?.stream.getTracks().forEach((track) => track.stop()), [])

  const start = async () => {
    setError(undefined)
    if (typeof MediaRecorder === "undefined" || navigator.mediaDevices === undefined) {
      setError({ error: "This browser cannot record audio here (recording needs https or localhost)." })
      return
    }
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true })
      const mimeType = preferredType()
      const media = new MediaRecorder(stream, mimeType === undefined ? {} : { mimeType })
      const chunks: Array<Blob> = []
      media.ondataavailable = (event) => {
        if (event.data.size > 0) chunks.push(event.data)
      }
      media.onstop = () => {
        stream.getTracks().forEach((track) => track.stop())
        const type = media.mimeType || "audio/webm"
        const blob = new Blob(chunks, { type })
        const extension = type.includes("mp4") ? "m4a" : type.includes("ogg") ? "ogg" : "webm"
        const name = `recording-${new Date().toISOString().slice(0, 19).replace(/:/g, "-")}.${extension}`
        setState({ step: "sending", progress: 0 })
        uploadMultipart(blob, (progress) => setState({ step: "sending", progress }), { source: "recording", filename: name })
          .then(() => onAdded())
          .catch((failure: unknown) => setError(failure))
          .finally(() => setState({ step: "idle" }))
      }
      recorder.current = media
      media.start(1000)
      setState({ step: "recording", started: Date.now() })
      setNow(Date.now())
    } catch (failure) {
      setError({ error: `The microphone could not be opened: ${failure instanceof Error ? failure.message : String(failure)}` })
    }
  }

  return (
    <div class="recorder">
      {state.step === "idle" && <button type="button" onClick={start}>● Record</button>}
      {state.step === "recording" && (
        <>
          <button type="button" class="danger" onClick={() => recorder.current?.stop()}>■ Stop and transcribe</button>
          <span role="status" aria-live="polite" class="recording">Recording {duration((now - state.started) / 1000)}</span>
        </>
      )}
      {state.step === "sending" && <Busy label={`Sending the recording ${Math.round(state.progress * 100)} %`} value={state.progress} />}
      <ErrorNote error={error} />
    </div>
  )
}
