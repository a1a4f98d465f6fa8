/**
 * Upload throughput and memory, whole process against whole process: the real server (a child
 * process on a fresh embedded data dir) takes one large recording as a multipart submit and as
 * a direct upload (init → PUT → commit); a bare `node:http` server that only streams the request
 * body to a file is the ceiling, measured in the same run. Prints MB/s, the ratio to the bare sink
 * (target ≥ 70 %), the server's RSS growth over its idle figure while the bytes flow (target
 * < 150 MB; idle is taken after one small upload, so the media probe's one-time WASM compile is
 * not counted as growth) and the server's CPU seconds per GB (steadier than MB/s when other
 * work shares the cores). Each job is deleted as soon as it is accepted, so no transcription competes.
 *
 *   npx node bench/upload.ts              # 5 GB (the service's limit)
 *   npx node bench/upload.ts --gb 1       # a quicker run
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { WAV_HEADER_BYTES, wavHeader } from "../pipeline/media/Wav.ts"
import { runCliJson, startServerProcess } from "../test/support/process.ts"

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? Number(process.argv[at + 1]) : fallback
}
const gigabytes = arg("gb", 5)
const totalBytes = Math.floor(gigabytes * 1e9) - (Math.floor(gigabytes * 1e9) % 4)
const work = fs.mkdtempSync(path.join(os.tmpdir(), "verbatim-bench-upload-"))

/** A WAV header (48 kHz stereo 16-bit, so 5 GB is about 7.7 hours, under the 10-hour limit) then zeros. */
const recording = (bytes: number): Readable => {
  const header = wavHeader({ sampleRate: 48_000, channels: 2, dataBytes: bytes - WAV_HEADER_BYTES })
  const chunk = Buffer.alloc(1 << 20)
  let left = bytes - WAV_HEADER_BYTES
  let sentHeader = false
  return new Readable({
    read() {
      if (!sentHeader) {
        sentHeader = true
        this.push(header)
        return
      }
      if (left <= 0) return void this.push(null)
      const n = Math.min(left, chunk.length)
      left -= n
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n))
    }
  })
}

/** User + system CPU seconds `pid` has used so far (clock ticks of 1/100 s, as on Linux). */
const cpuOf = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const rssOf = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024
}

/** Sends `body` and returns seconds and the answer; samples `pid`'s RSS and counts its CPU seconds meanwhile. */
const send = (url: string, method: string, headers: Record<string, string>, body: Readable, pid?: number) =>
  new Promise<{ seconds: number; status: number; text: string; peakRss: number; cpuSeconds: number }>((resolve, reject) => {
    const started = performance.now()
    const cpuBefore = pid === undefined ? 0 : cpuOf(pid)
    let peakRss = 0
    const sampler = pid === undefined ? undefined : setInterval(() => {
      peakRss = Math.max(peakRss, rssOf(pid))
    }, 100)
    const request = http.request(url, { method, headers }, (response) => {
      let text = ""
      response.on("data", (c) => (text += c))
      response.on("end", () => {
        if (sampler) clearInterval(sampler)
        resolve({
          seconds: (performance.now() - started) / 1000,
          status: response.statusCode ?? 0,
          text,
          peakRss,
          cpuSeconds: pid === undefined ? 0 : cpuOf(pid) - cpuBefore
        })
      })
    })
    request.on("error", reject)
    pipeline(body, request).catch(reject)
  })

/**
 * Waits until the kernel has written back what earlier phases left dirty (`sync`, then Dirty +
 * Writeback in /proc/meminfo under 64 MB). Without it each phase pays for the writeback of the one
 * before: a multipart submit right after the sink's 5 GB ran at a third of its speed with twice
 * the CPU per GB, while at 2 GB (under the kernel's dirty threshold) it matched the sink.
 */
const quiesce = async () => {
  spawnSync("sync")
  for (let waited = 0; waited < 600; waited++) {
    const meminfo = fs.readFileSync("/proc/meminfo", "utf8")
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(meminfo)?.[1] ?? 0)
    if (kb("Dirty") + kb("Writeback") < 64 * 1024) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The ceiling: a bare server that streams each request body to a file. */
const bareSink = async () => {
  const server = http.createServer((request, response) => {
    const out = fs.createWriteStream(path.join(work, "bare.bin"))
    pipeline(request, out).then(() => response.end("{}"), () => response.end())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  const result = await send(`http://127.0.0.1:${port}/`, "PUT", {
    "Content-Type": "application/octet-stream",
    "Content-Length": String(totalBytes)
  }, recording(totalBytes))
  server.close()
  fs.rmSync(path.join(work, "bare.bin"), { force: true })
  return result.seconds
}

/** A multipart body around a recording of `bytes`, with its exact length (the server refuses > 5 GB up front). */
const multipart = (boundary: string, bytes: number) => {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="long.wav"\r\nContent-Type: audio/wav\r\n\r\n`
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const body = Readable.from((async function*() {
    yield head
    for await (const chunk of recording(bytes)) yield chunk as Buffer
    yield tail
  })())
  return { body, length: head.length + bytes + tail.length }
}

const main = async () => {
  const dataDir = path.join(work, "data")
  const env = { VERBATIM_DATA_DIR: dataDir }
  await runCliJson(["admin", "account", "create", "--email", "bench@example.com", "--api-access"], env)
  await runCliJson(["admin", "credits", "grant", "--email", "bench@example.com", "--minutes", "100000"], env)
  const { key } = await runCliJson<{ key: string }>(["admin", "key", "create", "--email", "bench@example.com"], env)
  const server = await startServerProcess(env)
  try {
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const auth = { "X-API-Key": key }
    const remove = async (answer: string) => {
      const id = (JSON.parse(answer) as { job_id?: string }).job_id
      if (id !== undefined) await fetch(`${server.url}/v1/jobs/${id}`, { method: "DELETE", headers: auth })
    }
    const submit = (bytes: number) => {
      const boundary = "verbatimbench" + Date.now()
      const form = multipart(boundary, bytes)
      return send(`${server.url}/v1/transcribe`, "POST", {
        ...auth,
        "Content-Type": `multipart/form-data; boundary=${boundary}`,
        "Content-Length": String(form.length)
      }, form.body, server.child.pid!)
    }

    /** Waits until the server has used under 5 % of a core for a second (a deleted job's task may still be winding down). */
    const settle = async () => {
      for (let waited = 0; waited < 60; waited++) {
        const before = cpuOf(server.child.pid!)
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        if (cpuOf(server.child.pid!) - before < 0.05) return
      }
    }

    // One small job first, run to its end: what any server holds once it has taken an upload and
    // run a job (the media probe's compiled WASM module, the pipeline worker) is not growth while
    // bytes flow. After each large submit the server settles, so no transcription competes.
    const coldRss = rssOf(server.child.pid!)
    const warmUp = await submit(2_000_000)
    if (warmUp.status !== 202) throw new Error(`warm-up submit answered ${warmUp.status}: ${warmUp.text}`)
    const warmUpJob = (JSON.parse(warmUp.text) as { job_id: string }).job_id
    for (let polls = 0; polls < 120; polls++) {
      const job = await (await fetch(`${server.url}/v1/jobs/${warmUpJob}`, { headers: auth })).json() as { status: string }
      if (job.status === "done" || job.status === "failed") break
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    await remove(warmUp.text)
    await settle()
    const idleRss = rssOf(server.child.pid!)

    await quiesce()
    const bareSeconds = await bareSink()

    await quiesce()
    const viaMultipart = await submit(totalBytes)
    await remove(viaMultipart.text)
    await settle()
    if (viaMultipart.status !== 202) throw new Error(`multipart submit answered ${viaMultipart.status}: ${viaMultipart.text}`)

    await quiesce()
    const ticket = await (await fetch(`${server.url}/v1/uploads/init`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ filename: "long.wav", size_bytes: totalBytes, content_type: "audio/wav" })
    })).json() as { job_id: string; object_key: string; upload_url: string; options: unknown }
    const viaPut = await send(ticket.upload_url, "PUT", {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(totalBytes)
    }, recording(totalBytes), server.child.pid!)
    if (viaPut.status !== 200) throw new Error(`upload PUT answered ${viaPut.status}: ${viaPut.text}`)
    const commit = await fetch(`${server.url}/v1/uploads/${ticket.job_id}/commit`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ object_key: ticket.object_key, options: ticket.options })
    })
    await remove(await commit.text())

    const mb = totalBytes / 1e6
    const line = (name: string, seconds: number, server?: { peakRss: number; cpuSeconds: number }) =>
      `${name.padEnd(22)} ${(mb / seconds).toFixed(0).padStart(6)} MB/s  ${seconds.toFixed(1).padStart(7)} s` +
      (server === undefined ? "" : `  ratio ${(bareSeconds / seconds).toFixed(2)}  RSS +${
        ((server.peakRss - idleRss) / 1e6).toFixed(0)
      } MB  server CPU ${(server.cpuSeconds / (totalBytes / 1e9)).toFixed(2)} s/GB`)
    console.log(
      `upload of ${(totalBytes / 1e9).toFixed(2)} GB; server idle RSS ${(idleRss / 1e6).toFixed(0)} MB ` +
        `(${(coldRss / 1e6).toFixed(0)} MB before its first upload)`
    )
    console.log(line("bare node:http sink", bareSeconds))
    console.log(line("multipart submit", viaMultipart.seconds, viaMultipart))
    console.log(line("direct upload PUT", viaPut.seconds, viaPut))
    console.log(`commit answered ${commit.status}`)
  } finally {
    await server.stop()
    fs.rmSync(work, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  fs.rmSync(work, { recursive: true, force: true })
  process.exitCode = 1
})

