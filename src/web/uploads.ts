/**
 * Sending recordings with upload progress. The typed client (fetch underneath) has no upload
 * progress events, so the bytes go through XMLHttpRequest here, with the same credentials as
 * the client (`authHeaders`); everything else (the direct-upload ticket and commit) goes through
 * the typed client. Answers are decoded with the contract's schemas.
 *
 * Files up to `directUploadBytes` go as one multipart `POST /v1/transcribe`; bigger ones through
 * the direct-upload flow (`uploads/init` → PUT to the signed URL → `commit`), which streams to
 * storage without a multipart parser and can be retried by step.
 */
import { Schema } from "effect"
import { SubmitAnswer } from "../contract/domain/Job.ts"
import type { JobSource } from "../contract/domain/Job.ts"
import { ApiError, authHeaders, call, toApiError } from "./api.ts"

export const directUploadBytes = 100 * 1000 * 1000

export type Progress = (fraction: number) => void

const decodeSubmit = Schema.decodeUnknownSync(SubmitAnswer)

/** One XMLHttpRequest with upload progress; resolves with the parsed JSON body of a 2xx answer. */
const send = (
  method: string,
  url: string,
  body: XMLHttpRequestBodyInit,
  headers: Record<string, string>,
  onProgress: Progress,
  signal?: AbortSignal
): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(method, url)
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value)
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total)
    }
    xhr.onload = () => {
      const parsed: unknown = (() => {
        try {
          return JSON.parse(xhr.responseText)
        } catch {
          return undefined
        }
      })()
      if (xhr.status >= 200 && xhr.status < 300) resolve(parsed)
      else reject(parsed === undefined ? new ApiError(`The upload was refused (HTTP ${xhr.status}).`, undefined) : toApiError(parsed))
    }
    xhr.onerror = () => reject(toApiError(undefined))
    xhr.onabort = () => reject(new ApiError("The upload was cancelled.", "CANCELLED"))
    signal?.addEventListener("abort", () => xhr.abort())
    xhr.send(body)
  })

/**
 * What the website asks for every recording: speakers (named on the transcript page) and per-word
 * times (the spoken word is highlighted as it plays, clip edges move word by word).
 */
export const siteJobOptions = { diarize: true, word_timestamps: true } as const

export interface SendOptions {
  readonly source?: JobSource
  readonly filename?: string
  readonly signal?: AbortSignal
}

/** Multipart `POST /v1/transcribe` with the file and its options as fields. */
export const uploadMultipart = async (file: Blob, onProgress: Progress, options: SendOptions = {}) => {
  const form = new FormData()
  if (options.source !== undefined) form.append("source", options.source)
  form.append("diarize", "true")
  form.append("word_timestamps", "true")
  form.append("file", file, options.filename ?? (file instanceof File ? file.name : "recording"))
  return decodeSubmit(await send("POST", "/v1/transcribe", form, authHeaders(), onProgress, options.signal))
}

/** The direct-upload flow for big files: ticket, bytes with progress, commit. */
export const uploadDirect = async (file: File, onProgress: Progress, options: SendOptions = {}) => {
  const ticket = await call((api) =>
    api.uploads.init({
      payload: {
        filename: file.name,
        size_bytes: file.size,
        ...siteJobOptions,
        ...(file.type === "" ? {} : { content_type: file.type }),
        ...(options.source === undefined ? {} : { source: options.source })
      },
      headers: {}
    })
  )
  // The signed URL authorises the transfer by itself; the ticket says which headers to send. The
  // session's headers go along so that the service lets this browser request through.
  await send(ticket.method.toUpperCase(), ticket.upload_url, file, { ...authHeaders(), ...ticket.headers }, onProgress, options.signal)
  return call((api) =>
    api.uploads.commit({
      params: { job_id: ticket.job_id },
      payload: { object_key: ticket.object_key, options: ticket.options, original_filename: file.name }
    })
  )
}

/** Picks the path by size. */
export const uploadFile = (file: File, onProgress: Progress, options: SendOptions = {}) =>
  file.size > directUploadBytes ? uploadDirect(file, onProgress, options) : uploadMultipart(file, onProgress, options)
