/**
 * `GET /v1/jobs/{job_id}/audio/url` as a URL to fetch. A `signed` answer's `url` is a path on
 * the API (spec, "Playback URL"), prefixed here with the client's `baseUrl`, the API root it
 * uses; a `direct` one is absolute and kept as is.
 */
import { Effect } from "effect"
import type { VerbatimClient } from "./Client.ts"

/** `path` on the API root `baseUrl` (which may carry a path prefix of its own). */
export const onApiRoot = (baseUrl: string, path: string) => baseUrl.replace(/\/+$/, "") + path

export const playbackUrl = Effect.fn("VerbatimClient.playbackUrl")(function*(
  client: VerbatimClient,
  jobId: string,
  claimToken?: string
) {
  const link = yield* client.api.playback.audioUrl({
    params: { job_id: jobId },
    headers: claimToken === undefined ? {} : { "x-claim-token": claimToken }
  })
  return link.storage === "signed" ? { ...link, url: onApiRoot(client.baseUrl, link.url) } : link
})
