/**
 * The `render-clip` task kind's declaration, apart from its handler (RenderClipTask.ts) so that
 * `Clips`, which enqueues it, and the handler, which imports `Clips`, both reach it.
 */
import { Schema } from "effect"
import { taskKind } from "../work/TaskKind.ts"

/** The `render-clip` kind: one task per clip (key = clip id), owned by the clip's job. */
export const RenderClip = taskKind({
  kind: "render-clip",
  payload: Schema.Struct({ clipId: Schema.String }),
  concurrency: 1,
  maxAttempts: 2,
  timeout: "2 hours",
  stallAfter: "2 minutes"
})
export type RenderClipPayload = typeof RenderClip.payload.Type
