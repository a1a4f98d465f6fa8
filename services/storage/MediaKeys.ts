/** Storage keys of a job's media: the one place object keys are named. */
import type { JobId } from "../../src/contract/domain/Ids.ts"

export const mediaKeys = {
  /** A multipart upload, stored as it arrives. */
  original: (jobId: JobId | string, extension: string) => `jobs/${jobId}/original.${extension}`,
  /** A direct upload's bytes (PUT to the signed URL) before and after commit. */
  directUpload: (jobId: JobId | string, extension: string) => `uploads/${jobId}/original.${extension}`,
  /** A link job's media once the runner downloaded it. */
  download: (jobId: JobId | string) => `jobs/${jobId}/download`
} as const
