/**
 * One user action at a time: `busy` says what runs (for a Busy note and disabled buttons) until
 * it settles, and `error` holds how the last one failed (cleared when the next starts).
 */
import { useState } from "preact/hooks"

export interface Action<B> {
  readonly busy: B | undefined
  readonly error: unknown
  readonly run: (what: B, action: () => Promise<void>) => Promise<void>
}

export const useAction = <B,>(): Action<B> => {
  const [busy, setBusy] = useState<B | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const run = async (what: B, action: () => Promise<void>) => {
    setBusy(what)
    setError(undefined)
    try {
      await action()
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(undefined)
    }
  }
  return { busy, error, run }
}
