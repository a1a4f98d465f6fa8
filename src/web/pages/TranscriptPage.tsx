/** `#/jobs/<id>`: the transcript page (player, transcript, speakers, downloads, ask). Placeholder for now. */
export const TranscriptPage = ({ jobId }: { readonly jobId: string }) => (
  <section class="card" aria-labelledby="transcript-title">
    <h2 id="transcript-title">Transcript</h2>
    <p class="muted">The transcript page for recording <code>{jobId}</code> is not built yet.</p>
    <p><a href={`#/jobs/${encodeURIComponent(jobId)}/clips`}>Clips</a> · <a href="#/library">Back to the library</a></p>
  </section>
)
