/**
 * Transcribe recordings, index them in a local search library, and ask it a question.
 *
 *   node examples/local-search.ts "when is the reading room open?" ../shared/media/a0*.wav
 *
 * The library's database lives in `./verbatim-library` (or `$VERBATIM_LIBRARY_DIR`) and
 * persists: a later run finds what earlier runs indexed. Each file is indexed under its own
 * name as id, so a hit's `job_id` is the file name. One process opens a library at a time.
 */
import * as path from "node:path"
import { createVerbatim } from "verbatim"

const [question, ...files] = process.argv.slice(2)
if (question === undefined || files.length === 0) {
  console.error("usage: node examples/local-search.ts QUESTION FILE...")
  process.exit(2)
}

const verbatim = createVerbatim({ model: "whisper-tiny.en", dataDir: process.env["VERBATIM_LIBRARY_DIR"] ?? "./verbatim-library" })
try {
  for (const file of files) {
    const { transcript } = await verbatim.transcribe(file)
    const passages = await verbatim.index(path.basename(file), transcript, { filename: path.basename(file) })
    process.stderr.write(`indexed ${path.basename(file)} (${passages} passages)\n`)
  }
  for (const hit of await verbatim.search(question, { limit: 3 })) {
    console.log(`${hit.job_id} ${hit.start.toFixed(1)}–${hit.end.toFixed(1)} s  ${hit.text}`)
  }
} finally {
  await verbatim.close()
}
