/**
 * The ffmpeg command of one clip render, from what the source holds (ffprobe's streams).
 *
 * Output: 1080×1920 H.264 (yuv420p, x264 `ultrafast`, CRF 23) + AAC 128 kb/s 48 kHz in mp4
 * with the index up front (`+faststart`), exactly `end − start` seconds (input seeking, so
 * the clip's first frame is time 0 for the captions too).
 *
 * Reframing rule for video sources (display aspect = width / height × sample aspect):
 * - aspect ≤ 1 (square or portrait): scaled to cover 1080×1920 and centre-cropped — at most
 *   44% of a square frame's width is lost, nothing of a 9:16 one;
 * - aspect > 1 (landscape): the whole frame scaled to 1080 wide, centred over a blurred,
 *   cropped, darkened copy of itself that fills the 9:16 canvas (a centre crop would cut
 *   two thirds of a 16:9 frame, speakers at the sides included). The blur is computed at a
 *   quarter of the size and scaled up, which costs a fraction of blurring 1080×1920.
 * Frame rate: the source's, capped at 30.
 * Audio sources (no video stream, or only cover art): a dark background, the waveform of
 * the clip across the middle, and the title at the top (drawn by the caption script).
 */

export interface SourceStreams {
  /** The first real video stream (not cover art), if any. */
  readonly video: { readonly width: number; readonly height: number; readonly aspect: number; readonly fps: number } | undefined
  readonly hasAudio: boolean
}

/** Where the files of a render are, as ffmpeg sees them (WASM paths or real ones). */
export interface RenderPaths {
  readonly input: string
  /** ffmpeg options for the input (LargeWav's `-ignore_length 1` for a WAV over 4 GiB). */
  readonly inputOptions?: ReadonlyArray<string>
  readonly output: string
  /** The ASS script; undefined when nothing is drawn. */
  readonly captions: string | undefined
  readonly fontsDir: string
}

export interface RenderWindow {
  readonly startSeconds: number
  readonly durationSeconds: number
}

interface ProbeJson {
  readonly streams?: ReadonlyArray<{
    readonly codec_type?: string
    readonly width?: number
    readonly height?: number
    readonly sample_aspect_ratio?: string
    readonly avg_frame_rate?: string
    readonly r_frame_rate?: string
    readonly disposition?: { readonly attached_pic?: number }
  }>
}

const ratio = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const [n, d] = text.split(/[:/]/).map(Number)
  return n !== undefined && d !== undefined && n > 0 && d > 0 ? n / d : undefined
}

/** Streams from `ffprobe -show_streams -of json`. */
export const sourceStreams = (probeJson: string): SourceStreams => {
  let parsed: ProbeJson
  try {
    parsed = JSON.parse(probeJson) as ProbeJson
  } catch {
    parsed = {}
  }
  const streams = parsed.streams ?? []
  const video = streams.find((s) => s.codec_type === "video" && s.disposition?.attached_pic !== 1 && (s.width ?? 0) > 0)
  return {
    hasAudio: streams.some((s) => s.codec_type === "audio"),
    video: video === undefined ? undefined : {
      width: video.width!,
      height: video.height ?? 1,
      aspect: (video.width! / Math.max(1, video.height ?? 1)) * (ratio(video.sample_aspect_ratio) ?? 1),
      fps: ratio(video.avg_frame_rate) ?? ratio(video.r_frame_rate) ?? 25
    }
  }
}

export const reframing = (aspect: number): "crop" | "blurred-fill" => aspect <= 1 ? "crop" : "blurred-fill"

const W = 1080
const H = 1920

/** `ass` filter arguments are themselves filter syntax: escape what it treats specially. */
const filterPath = (path: string) => path.replace(/\\/g, "/").replace(/([:'\[\],;])/g, "\\$1")

export const renderArgs = (
  streams: SourceStreams,
  window: RenderWindow,
  paths: RenderPaths
): ReadonlyArray<string> => {
  const duration = window.durationSeconds.toFixed(3)
  const overlay = paths.captions === undefined
    ? ""
    : `,ass=${filterPath(paths.captions)}:fontsdir=${filterPath(paths.fontsDir)}`
  let graph: string
  if (streams.video !== undefined) {
    const fps = Math.min(30, Math.max(1, Math.round(streams.video.fps * 1000) / 1000))
    const framed = reframing(streams.video.aspect) === "crop"
      ? `[0:v]scale=${W}:${H}:force_original_aspect_ratio=increase,crop=${W}:${H},setsar=1`
      : `[0:v]split=2[bgsrc][fgsrc];` +
        `[bgsrc]scale=${W / 4}:${H / 4}:force_original_aspect_ratio=increase,crop=${W / 4}:${H / 4},` +
        `boxblur=8:2,eq=brightness=-0.12,scale=${W}:${H},setsar=1[bg];` +
        `[fgsrc]scale=${W}:-2,setsar=1[fg];[bg][fg]overlay=(W-w)/2:(H-h)/2`
    graph = `${framed},fps=${fps}${overlay},format=yuv420p[v]`
  } else {
    graph = `color=c=0x141a26:s=${W}x${H}:r=25:d=${duration}[bg];` +
      `[0:a:0]asplit=2[aout][wsrc];` +
      `[wsrc]showwaves=s=${W}x480:mode=cline:rate=25:scale=sqrt:draw=full:colors=0x4FC3F7[wave];` +
      `[bg][wave]overlay=0:${(H - 480) / 2}:shortest=1${overlay},format=yuv420p[v]`
  }
  return [
    "-hide_banner",
    "-nostdin",
    "-y",
    "-ss",
    window.startSeconds.toFixed(3),
    "-t",
    duration,
    ...(paths.inputOptions ?? []),
    "-i",
    paths.input,
    "-filter_complex",
    graph,
    "-map",
    "[v]",
    "-map",
    streams.video !== undefined ? "0:a:0" : "[aout]",
    "-t",
    duration,
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-crf",
    "23",
    "-pix_fmt",
    "yuv420p",
    "-c:a",
    "aac",
    "-b:a",
    "128k",
    "-ar",
    "48000",
    "-movflags",
    "+faststart",
    paths.output
  ]
}

/** ffprobe arguments whose JSON `sourceStreams` reads. */
export const probeArgs = (input: string): ReadonlyArray<string> => [
  "-v",
  "error",
  "-show_entries",
  "stream=codec_type,width,height,sample_aspect_ratio,avg_frame_rate,r_frame_rate:stream_disposition=attached_pic",
  "-of",
  "json",
  input
]

/** `time=HH:MM:SS.xx` of ffmpeg's progress lines, in seconds. */
export const progressSeconds = (line: string): number | undefined => {
  const match = /time=(\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(line)
  return match === null ? undefined : Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3])
}
