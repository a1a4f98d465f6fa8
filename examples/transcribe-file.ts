/**
 * Transcribe a file in-process with the Promise API and print it as SRT.
 *
 *   node examples/transcribe-file.ts ../shared/media/a01_slt_budget.wav
 *
 * (Node 24 runs TypeScript directly. Models come from `../shared/models`; a missing one is
 * downloaded on first use.)
 */
import { createVerbatim } from "verbatim"

const file = process.argv[2]
if (file === undefined) {
  console.error("usage: node examples/transcribe-file.ts FILE")
  process.exit(2)
}

const verbatim = createVerbatim({ model: "whisper-tiny.en" })
try {
  const result = await verbatim.transcribe(file, {
    words: true,
    onProgress: (percent) => process.stderr.write(`\r${Math.round(percent)}%`)
  })
  process.stderr.write(`\n${result.durationSeconds.toFixed(1)} s of audio, language ${result.language}\n`)
  console.log(await verbatim.render(result.transcript, "srt"))
} finally {
  await verbatim.close()
}
