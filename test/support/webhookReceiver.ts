/**
 * A local HTTP endpoint that records webhook deliveries (headers and raw body) and answers
 * with statuses the test queues up (200 once the queue is empty). With `delayMs` it records
 * each delivery on arrival but answers only that long after it (a slow receiver).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Delivery {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

export interface WebhookReceiver {
  readonly port: number
  readonly url: (path?: string) => string
  readonly deliveries: Array<Delivery>
  /** Statuses for the next answers, in order. */
  readonly answers: Array<number>
  close(): Promise<void>
}

export const startWebhookReceiver = (options: { readonly delayMs?: number } = {}): Promise<WebhookReceiver> =>
  new Promise((resolve) => {
    const deliveries: Array<Delivery> = []
    const answers: Array<number> = []
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        deliveries.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() })
        const status = answers.shift() ?? 200
        const answer = () => res.destroyed || res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "not now")
        if (options.delayMs === undefined) answer()
        else setTimeout(answer, options.delayMs)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        port,
        url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
        deliveries,
        answers,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
