import * as path from "node:path"

/** shared/ sits beside the repository root (read-only models and media). */
export const sharedDir = path.resolve(import.meta.dirname, "../../../shared")
export const modelsDir = path.join(sharedDir, "models")
export const mediaDir = path.join(sharedDir, "media")
