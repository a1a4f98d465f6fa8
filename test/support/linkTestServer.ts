/**
 * A real HTTP server on 127.0.0.1 with a random port, for link fetching tests. Routes map a path
 * (without query) to a handler; unknown paths answer 404. The server records every request path and
 * Host header, and closes (dropping open connections) when the test's scope ends.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { Effect, type Scope } from "effect"

export type Route = (req: http.IncomingMessage, res: http.ServerResponse, server: TestServer) => void

export interface TestServer {
  readonly port: number
  /** "http://127.0.0.1:<port>" */
  readonly origin: string
  /** Paths requested so far, in order (query included). */
  readonly hits: Array<string>
  /** Host header of each request, in order. */
  readonly hosts: Array<string | undefined>
  /** Resolves when the n-th (1-based) connection the server accepted has closed. */
  readonly connectionClosed: (n: number) => Promise<void>
}

export const startTestServer = (
  routes: Record<string, Route>,
  options: { readonly tls?: { readonly key: string; readonly cert: string } } = {}
): Effect.Effect<TestServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ server: http.Server; state: TestServer }>((resolve) => {
        const hits: Array<string> = []
        const hosts: Array<string | undefined> = []
        const closed: Array<Promise<void>> = []
        let state: TestServer | undefined
        const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
          hits.push(req.url ?? "")
          hosts.push(req.headers.host)
          const path = (req.url ?? "/").split("?")[0]!
          const route = routes[path]
          if (route === undefined) {
            res.writeHead(404, { "content-type": "text/plain" }).end("not found")
            return
          }
          route(req, res, state!)
        }
        const server: http.Server = options.tls === undefined
          ? http.createServer(handler)
          : https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler)
        server.on(options.tls === undefined ? "connection" : "secureConnection", (socket) => {
          closed.push(new Promise((done) => socket.once("close", () => done())))
        })
        server.listen(0, "127.0.0.1", () => {
          const port = (server.address() as AddressInfo).port
          state = {
            port,
            origin: `${options.tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
            hits,
            hosts,
            connectionClosed: (n) => closed[n - 1] ?? Promise.reject(new Error(`no connection ${n}`))
          }
          resolve({ server, state })
        })
      })
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  ).pipe(Effect.map(({ state }) => state))

/** Answers with a fixed status, headers and body. */
export const respond = (
  status: number,
  headers: Record<string, string>,
  body: string | Uint8Array = ""
): Route =>
(_req, res) => {
  res.writeHead(status, { "content-length": String(Buffer.byteLength(body)), ...headers }).end(body)
}

/** Answers with a redirect to `location` (relative or absolute). */
export const redirect = (location: string, status = 302): Route => (_req, res) => {
  res.writeHead(status, { location }).end()
}
