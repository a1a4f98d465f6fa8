/** Loads data for a component and keeps the last answer, the failure and whether a load runs. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"

export interface Loaded<A> {
  readonly data: A | undefined
  readonly error: unknown
  readonly loading: boolean
  readonly reload: () => Promise<void>
}

export const useLoad = <A,>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): Loaded<A> => {
  const [data, setData] = useState<A | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [loading, setLoading] = useState(true)
  const latest = useRef(0)
  const reload = useCallback(async () => {
    // Only the newest load may write: an older answer arriving late is dropped.
    const ticket = ++latest.current
    setLoading(true)
    try {
      const value = await load()
      if (ticket === latest.current) {
        setData(value)
        setError(undefined)
      }
    } catch (failure) {
      if (ticket === latest.current) setError(failure)
    } finally {
      if (ticket === latest.current) setLoading(false)
    }
  }, deps)
  useEffect(() => {
    void reload()
    return () => {
      latest.current++
    }
  }, [reload])
  return { data, error, loading, reload }
}
