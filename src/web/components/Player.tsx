/**
 * The recording's player: an <audio> (or <video> for video media) on the job's playback link.
 * `GET /v1/jobs/{id}/audio/url` answers a path on this origin when storage is signed (used as is:
 * the page is on the API's origin) or an absolute object-store URL. The link expires; when the
 * element fails to load it asks for a fresh one and resumes where it was.
 *
 * The parent keeps a `MediaRef` to seek (`seekTo`) and to follow the playing time (`useMediaTime`).
 */
import type { RefObject } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { authHeaders, call } from "../api.ts"
import { Busy, ErrorNote } from "./Status.tsx"

export type MediaRef = RefObject<HTMLMediaElement | null>

/** Moves the player to `seconds` and plays (a refused autoplay leaves it paused at that time). */
export const seekTo = (media: MediaRef, seconds: number, play = true) => {
  const element = media.current
  if (element === null) return
  element.currentTime = Math.max(0, seconds)
  if (play) element.play().catch(() => undefined)
}

const videoNames = /\.(mp4|m4v|mov|mkv|avi|wmv|flv|3gp|3g2|mpe?g|ts|ogv)$/i

/**
 * Whether the link serves video: the answer's own type (HEAD), so a webm of audio stays audio.
 * An object-store link on another origin cannot be asked (no CORS): the file's name decides.
 */
const isVideo = async (url: string, filename: string | null): Promise<boolean> => {
  const sameOrigin = new URL(url, location.href).origin === location.origin
  if (sameOrigin) {
    try {
      const answer = await fetch(url, { method: "HEAD", headers: authHeaders() })
      if (answer.ok) return (answer.headers.get("content-type") ?? "").startsWith("video/")
    } catch {
      // Unreachable now: the element's own load will say so; fall back to the name.
    }
  }
  return filename !== null && videoNames.test(filename)
}

interface Source {
  readonly url: string
  readonly video: boolean
}

export const Player = ({ jobId, filename, media, start, label }: {
  readonly jobId: string
  readonly filename: string | null
  readonly media: MediaRef
  /** Where to start once the media can play (e.g. `?t=` of the page's link). */
  readonly start?: number | undefined
  readonly label: string
}) => {
  const [source, setSource] = useState<Source | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [refreshes, setRefreshes] = useState(0)
  const resumeAt = useRef<number | undefined>(start)

  useEffect(() => {
    resumeAt.current = start
    if (start !== undefined && media.current !== null && source !== undefined) seekTo(media, start)
  }, [start])

  useEffect(() => {
    let live = true
    setError(undefined)
    call((api) => api.playback.audioUrl({ params: { job_id: jobId }, headers: {} }))
      .then(async (link) => {
        const video = await isVideo(link.url, filename)
        if (live) setSource({ url: link.url, video })
      })
      .catch((failure) => {
        if (live) setError(failure)
      })
    return () => {
      live = false
    }
  }, [jobId, refreshes])

  const onLoaded = () => {
    const at = resumeAt.current
    if (at !== undefined) {
      resumeAt.current = undefined
      seekTo(media, at)
    }
  }
  const onError = () => {
    // An expired link: ask for a new one (a few times at most), continuing where it was.
    if (refreshes >= 3) {
      setError(new Error("The recording could not be played in this browser."))
      return
    }
    resumeAt.current = media.current?.currentTime ?? resumeAt.current
    setRefreshes((n) => n + 1)
  }

  if (error !== undefined) return <ErrorNote error={error} />
  if (source === undefined) return <Busy label="Loading the player" />
  const props = {
    ref: (element: HTMLMediaElement | null) => {
      media.current = element
    },
    src: source.url,
    controls: true,
    preload: "metadata" as const,
    "aria-label": label,
    onLoadedMetadata: onLoaded,
    onError
  }
  return source.video
    ? <video class="player player-video" playsInline {...props} />
    : <audio class="player" {...props} />
}

/**
 * The playing time, updated on every frame while playing (requestAnimationFrame) and on seeks;
 * `pick` reduces it to what the caller draws, so the page re-renders only when that changes.
 */
export const useMediaTime = <A,>(media: MediaRef, pick: (seconds: number) => A, same: (a: A, b: A) => boolean): A => {
  const [value, setValue] = useState<A>(() => pick(0))
  const latest = useRef(value)
  const pickRef = useRef(pick)
  pickRef.current = pick
  useEffect(() => {
    let frame = 0
    let bound: HTMLMediaElement | null = null
    const update = () => {
      const element = media.current
      if (element === null) return
      const next = pickRef.current(element.currentTime)
      if (!same(next, latest.current)) {
        latest.current = next
        setValue(next)
      }
    }
    const loop = () => {
      update()
      if (bound !== null && !bound.paused) frame = requestAnimationFrame(loop)
    }
    const start = () => {
      cancelAnimationFrame(frame)
      frame = requestAnimationFrame(loop)
    }
    const events = ["play", "timeupdate", "seeked", "seeking", "pause", "ended"] as const
    const onEvent = (event: Event) => (event.type === "play" ? start() : update())
    // The element appears once its link is loaded: look for it until it is there.
    const attach = setInterval(() => {
      if (media.current === bound) return
      for (const name of events) bound?.removeEventListener(name, onEvent)
      bound = media.current
      for (const name of events) bound?.addEventListener(name, onEvent)
      update()
    }, 200)
    return () => {
      clearInterval(attach)
      cancelAnimationFrame(frame)
      for (const name of events) bound?.removeEventListener(name, onEvent)
    }
  }, [media])
  // A new `pick` (new transcript) applies at once.
  useEffect(() => {
    const element = media.current
    const next = pick(element?.currentTime ?? 0)
    if (same(next, latest.current)) return
    latest.current = next
    setValue(next)
  }, [pick])
  return value
}
