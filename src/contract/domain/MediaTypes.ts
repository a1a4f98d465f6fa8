/**
 * Which files a job accepts: by extension first (clear for people), then by declared MIME
 * type. The decoder has the last word: a file that passes here but holds no audio ends
 * as a failed job with `NO_AUDIO`.
 */
export const acceptedExtensions: ReadonlySet<string> = new Set([
  "mp3", "m4a", "m4b", "wav", "wave", "aac", "flac", "ogg", "oga", "opus", "spx", "wma", "amr", "aif", "aiff",
  "caf", "mka", "weba", "ac3", "mp2", "mpga", "mp4", "m4v", "mov", "webm", "mkv", "avi", "wmv", "flv", "3gp",
  "3g2", "mpeg", "mpg", "ts", "mts", "ogv"
])

export const extensionOf = (filename: string): string | undefined => {
  const match = /\.([A-Za-z0-9]{1,5})$/.exec(filename.trim())
  return match?.[1]?.toLowerCase()
}

/** Declared types we accept; `application/octet-stream` means "unknown" and is fine. */
export const isAcceptedMime = (contentType: string): boolean => {
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return type === "" ||
    type.startsWith("audio/") ||
    type.startsWith("video/") ||
    type === "application/octet-stream" ||
    type === "application/ogg" ||
    type === "application/mp4" ||
    type === "binary/octet-stream"
}
