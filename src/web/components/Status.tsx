/** Waiting and failure, the same way on every page: an announced progress bar, the API's sentence. */
import type { ComponentChildren } from "preact"
import { ApiError, toApiError } from "../api.ts"

/** An indeterminate (or, with `value`, determinate) progress bar announced to screen readers. */
export const Busy = ({ label, value }: { readonly label: string; readonly value?: number | undefined }) => (
  <div class="busy" role="status" aria-live="polite">
    {value === undefined
      ? <progress aria-label={label} />
      : <progress aria-label={label} max={1} value={value} />}
    <span>{label}</span>
  </div>
)

/** The API's `error` sentence, with the refusal's pay or upgrade link when it has one. */
export const ErrorNote = ({ error, children }: { readonly error: unknown; readonly children?: ComponentChildren }) => {
  if (error === undefined || error === null) return null
  const failure: ApiError = toApiError(error)
  const link = failure.link()
  return (
    <p class="error" role="alert">
      {failure.message}
      {link !== undefined && <> <a href={link} target="_blank" rel="noopener">Open the pay link</a></>}
      {children}
    </p>
  )
}
