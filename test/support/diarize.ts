/** Test shorthand: the `Diarizer` in context diarizes `pcm` over its voice-activity `regions`. */
import { Diarizer } from "../../pipeline/diarize/Diarizer.ts"
import type { SpeechSpan } from "../../pipeline/vad/VoiceActivity.ts"

export const diarizeAudio = (pcm: Float32Array, regions: ReadonlyArray<SpeechSpan>) =>
  Diarizer.use((diarizer) => diarizer.diarize(pcm, regions))
