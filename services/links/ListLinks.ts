/**
 * Link shapes that name a collection (profile, channel, playlist, set) rather than one recording.
 * The spec refuses those with LINK_IS_A_LIST before anything is fetched. Links to a file (a path
 * ending in a media or feed extension) are never judged by their shape.
 */
import { extensionOf } from "./ContentSniff.ts"

const PROFILE_TABS = new Set(["", "videos", "shorts", "streams", "podcasts", "playlists", "featured", "releases", "community"])

export const isListLink = (url: URL): boolean => {
  if (extensionOf(url.href) !== undefined && !/^html?$/.test(extensionOf(url.href)!)) return false
  const segments = url.pathname.split("/").filter((s) => s !== "").map((s) => decodeSegment(s).toLowerCase())
  if (segments.length === 0) return false
  if (segments.includes("playlist") || segments.includes("playlists")) return true
  // /sets/<name> (a set of tracks); /user/<name>, /channel/<id>, /c/<name> (profiles and channels)
  for (const marker of ["sets", "user", "users", "channel", "channels", "c"]) {
    const at = segments.indexOf(marker)
    if (at !== -1 && at < segments.length - 1) return true
  }
  // /@name or /@name/<profile tab>: a profile; /@name/<episode-slug> is left to the page itself.
  const handle = segments.findIndex((s) => s.startsWith("@") && s.length > 1)
  if (handle !== -1) {
    const rest = segments.slice(handle + 1)
    return rest.length === 0 || (rest.length === 1 && PROFILE_TABS.has(rest[0]!))
  }
  return false
}

const decodeSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
