/**
 * Where playback and clip links point: the storage backend's side of a media link.
 *
 * Backend interface: `presign(key, options)` answers an absolute URL that lets anyone holding
 * it GET (with Range) the object for `options.expiresIn` seconds, with the given response
 * content type and download name — e.g. an S3 / GCS / R2 presigned GetObject URL with
 * `response-content-type` and `response-content-disposition` — or `None` when the backend
 * cannot presign. `Some` makes the answer `storage: "direct"`; `None` makes this API serve
 * the bytes itself through a link it signs (`storage: "signed"`, see `LinkTokens`). Presigned
 * URLs must expire no later than `expiresIn`, since the answer promises that lifetime.
 *
 * The local directory store (`MediaStorage.layerDirectory`) cannot presign: `layerLocal`.
 */
import { Context, Effect, Layer, Option } from "effect"

export interface PresignOptions {
  readonly expiresIn: number
  readonly contentType: string
  readonly filename: string
}

export class PlaybackStore extends Context.Service<PlaybackStore, {
  presign(key: string, options: PresignOptions): Effect.Effect<Option.Option<string>>
}>()("verbatim/playback/PlaybackStore") {
  static readonly layerLocal = Layer.succeed(PlaybackStore, PlaybackStore.of({ presign: () => Effect.succeed(Option.none()) }))
}
