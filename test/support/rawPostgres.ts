/**
 * A bare Postgres wire-protocol client over a unix socket, for tests that must decide where a
 * client's messages are cut (a driver writes a whole query at once): startup with trust
 * auth, then whatever messages the test sends. `untilReady` answers the first column of every
 * DataRow, or `error: <message>` for an ErrorResponse, up to the next ReadyForQuery.
 */
import * as net from "node:net"

const message = (type: string, body: Buffer): Buffer => {
  const head = Buffer.alloc(5)
  head.write(type, 0, "latin1")
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}
const cString = (s: string) => Buffer.from(`${s}\0`, "utf8")

/** Parse of an unnamed statement without parameters. */
export const parse = (sqlText: string) => message("P", Buffer.concat([cString(""), cString(sqlText), Buffer.from([0, 0])]))
/** Bind of the unnamed statement to the unnamed portal, no parameters, text results. */
export const bind = () => message("B", Buffer.concat([cString(""), cString(""), Buffer.alloc(6)]))
/** Execute of the unnamed portal, every row. */
export const execute = () => message("E", Buffer.concat([cString(""), Buffer.alloc(4)]))
export const sync = () => message("S", Buffer.alloc(0))

export interface RawClient {
  send(bytes: Buffer): void
  untilReady(): Promise<ReadonlyArray<string>>
  close(): void
}

export const rawClient = (socketPath: string): Promise<RawClient> =>
  new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath)
    let buffer = Buffer.alloc(0)
    let answers: Array<string> = []
    let waiting: ((answers: ReadonlyArray<string>) => void) | undefined
    let started = false
    const client: RawClient = {
      send: (bytes) => void socket.write(bytes),
      untilReady: () => new Promise((done) => (waiting = done)),
      close: () => socket.end()
    }
    socket.on("error", reject)
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      while (buffer.length >= 5 && buffer.length >= 1 + buffer.readInt32BE(1)) {
        const end = 1 + buffer.readInt32BE(1)
        const type = String.fromCharCode(buffer[0]!)
        const body = buffer.subarray(5, end)
        buffer = buffer.subarray(end)
        if (type === "D") {
          const length = body.readInt32BE(2)
          answers.push(body.subarray(6, 6 + length).toString("utf8"))
        } else if (type === "E") {
          const fields = body.toString("utf8").split("\0")
          answers.push(`error: ${fields.find((f) => f.startsWith("M"))?.slice(1)}`)
        } else if (type === "Z") {
          if (!started) {
            started = true
            resolve(client)
          } else {
            waiting?.(answers)
            answers = []
          }
        }
      }
    })
    socket.on("connect", () => {
      const params = Buffer.concat([cString("user"), cString("postgres"), cString("database"), cString("postgres"), Buffer.from([0])])
      const head = Buffer.alloc(8)
      head.writeInt32BE(params.length + 8, 0)
      head.writeInt32BE(196608, 4) // protocol 3.0
      socket.write(Buffer.concat([head, params]))
    })
  })
