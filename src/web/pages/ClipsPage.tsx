/** `#/jobs/<id>/clips`: clip candidates, preview, render. Placeholder for now. */
export const ClipsPage = ({ jobId }: { readonly jobId: string }) => (
  <section class="card" aria-labelledby="clips-title">
    <h2 id="clips-title">Clips</h2>
    <p class="muted">Clips for recording <code>{jobId}</code> are not built yet.</p>
    <p><a href={`#/jobs/${encodeURIComponent(jobId)}`}>Back to the transcript</a></p>
  </section>
)
