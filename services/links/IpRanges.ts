/**
 * Address policy for outbound link fetching: which IP addresses a server-side fetch must never reach,
 * and the operator's allow-list that exempts chosen hosts (for example a test server on 127.0.0.1).
 *
 * Addresses are compared as bytes, so every textual spelling of an address (IPv4-mapped IPv6,
 * compressed IPv6, NAT64 and 6to4 forms) is judged by the IPv4 address it carries.
 */
import { isIP } from "node:net"

export interface IpAddress {
  readonly family: 4 | 6
  readonly bytes: Uint8Array
}

interface Cidr {
  readonly family: 4 | 6
  readonly bytes: Uint8Array
  readonly prefix: number
}

const parseIpv4 = (text: string): Uint8Array | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const bytes = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!
    if (!/^\d{1,3}$/.test(part)) return undefined
    const value = Number(part)
    if (value > 255) return undefined
    bytes[i] = value
  }
  return bytes
}

const parseIpv6 = (input: string): Uint8Array | undefined => {
  // A zone index ("fe80::1%eth0") names an interface, never a public destination; drop it for range checks.
  const text = input.split("%")[0]!
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string): Array<string> => (part === "" ? [] : part.split(":"))
  const head = groupsOf(halves[0]!)
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : []
  const words: Array<number> = []
  const pushGroups = (groups: Array<string>, target: Array<number>): boolean => {
    for (let i = 0; i < groups.length; i++) {
      const group = groups[i]!
      if (group.includes(".")) {
        // An embedded dotted IPv4 address is only valid as the last group.
        if (i !== groups.length - 1) return false
        const v4 = parseIpv4(group)
        if (v4 === undefined) return false
        target.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!)
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return false
        target.push(parseInt(group, 16))
      }
    }
    return true
  }
  const headWords: Array<number> = []
  const tailWords: Array<number> = []
  if (!pushGroups(head, headWords) || !pushGroups(tail, tailWords)) return undefined
  if (halves.length === 2) {
    const missing = 8 - headWords.length - tailWords.length
    if (missing < 1) return undefined
    words.push(...headWords, ...new Array<number>(missing).fill(0), ...tailWords)
  } else {
    words.push(...headWords)
  }
  if (words.length !== 8) return undefined
  const bytes = new Uint8Array(16)
  words.forEach((word, i) => {
    bytes[i * 2] = word >> 8
    bytes[i * 2 + 1] = word & 0xff
  })
  return bytes
}

/** Parses a literal IPv4 or IPv6 address (IPv6 may be bracketed, as in a URL host). */
export const parseIp = (text: string): IpAddress | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  const family = isIP(bare.split("%")[0]!)
  if (family === 4) {
    const bytes = parseIpv4(bare)
    return bytes === undefined ? undefined : { family: 4, bytes }
  }
  if (family === 6) {
    const bytes = parseIpv6(bare)
    return bytes === undefined ? undefined : { family: 6, bytes }
  }
  return undefined
}

const parseCidr = (text: string): Cidr | undefined => {
  const [addressText, prefixText] = text.split("/")
  const address = parseIp(addressText!)
  if (address === undefined) return undefined
  const max = address.family === 4 ? 32 : 128
  const prefix = prefixText === undefined ? max : Number(prefixText)
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return undefined
  return { family: address.family, bytes: address.bytes, prefix }
}

const cidrContains = (cidr: Cidr, address: IpAddress): boolean => {
  if (cidr.family !== address.family) return false
  let remaining = cidr.prefix
  for (let i = 0; remaining > 0; i++, remaining -= 8) {
    const mask = remaining >= 8 ? 0xff : (0xff << (8 - remaining)) & 0xff
    if ((cidr.bytes[i]! & mask) !== (address.bytes[i]! & mask)) return false
  }
  return true
}

const cidr = (text: string): Cidr => {
  const parsed = parseCidr(text)
  if (parsed === undefined) throw new Error(`invalid built-in range ${text}`)
  return parsed
}

/** IPv4 ranges that are not public unicast destinations, with the reason given in refusals. */
const blockedV4: ReadonlyArray<readonly [Cidr, string]> = [
  [cidr("0.0.0.0/8"), "unspecified"],
  [cidr("10.0.0.0/8"), "private"],
  [cidr("100.64.0.0/10"), "carrier-grade NAT"],
  [cidr("127.0.0.0/8"), "loopback"],
  [cidr("169.254.0.0/16"), "link-local"],
  [cidr("172.16.0.0/12"), "private"],
  [cidr("192.0.0.0/24"), "reserved"],
  [cidr("192.0.2.0/24"), "documentation"],
  [cidr("192.88.99.0/24"), "reserved"],
  [cidr("192.168.0.0/16"), "private"],
  [cidr("198.18.0.0/15"), "reserved"],
  [cidr("198.51.100.0/24"), "documentation"],
  [cidr("203.0.113.0/24"), "documentation"],
  [cidr("224.0.0.0/4"), "multicast"],
  [cidr("240.0.0.0/4"), "reserved"]
]

const blockedV6: ReadonlyArray<readonly [Cidr, string]> = [
  [cidr("::/128"), "unspecified"],
  [cidr("::1/128"), "loopback"],
  [cidr("100::/64"), "reserved"],
  [cidr("64:ff9b:1::/48"), "private"],
  [cidr("2001::/32"), "reserved"],
  [cidr("2001:db8::/32"), "documentation"],
  [cidr("fc00::/7"), "private"],
  [cidr("fe80::/10"), "link-local"],
  [cidr("fec0::/10"), "private"],
  [cidr("ff00::/8"), "multicast"]
]

/** IPv6 forms that carry an IPv4 address: [range, offset of the 4 IPv4 bytes]. */
const embeddingV4: ReadonlyArray<readonly [Cidr, number]> = [
  [cidr("::ffff:0:0/96"), 12], // IPv4-mapped
  [cidr("::/96"), 12], // IPv4-compatible (deprecated)
  [cidr("::ffff:0:0:0/96"), 12], // IPv4-translated
  [cidr("64:ff9b::/96"), 12], // NAT64
  [cidr("2002::/16"), 2] // 6to4
]

/** The IPv4 address an IPv6 address stands for, if it is one of the embedding forms. */
export const embeddedIpv4 = (address: IpAddress): IpAddress | undefined => {
  if (address.family !== 6) return undefined
  for (const [range, offset] of embeddingV4) {
    if (cidrContains(range, address)) {
      return { family: 4, bytes: address.bytes.slice(offset, offset + 4) }
    }
  }
  return undefined
}

/**
 * Why an address must not be fetched from a server ("loopback", "private", ...), or undefined for a
 * public unicast address. `::` and `::1` sit inside the IPv4-compatible range, so they are judged first.
 */
export const blockedReason = (address: IpAddress): string | undefined => {
  if (address.family === 4) {
    return blockedV4.find(([range]) => cidrContains(range, address))?.[1]
  }
  const direct = blockedV6.find(([range]) => cidrContains(range, address))?.[1]
  if (direct !== undefined) return direct
  const v4 = embeddedIpv4(address)
  return v4 === undefined ? undefined : blockedReason(v4)
}

/** Host names that mean "this machine" or a private network whatever DNS says. */
export const isLocalHostName = (hostname: string): boolean => {
  const name = hostname.toLowerCase().replace(/\.$/, "")
  return (
    name === "localhost" ||
    name.endsWith(".localhost") ||
    name === "localhost.localdomain" ||
    name.endsWith(".local") ||
    name.endsWith(".internal") ||
    name.endsWith(".localdomain") ||
    name.endsWith(".home.arpa")
  )
}

/**
 * One allow-list entry: an address, a CIDR range or a host name, optionally bound to one port.
 * Written as "127.0.0.1", "127.0.0.1:8080", "10.0.0.0/8", "[::1]:8080", "media.test" or "media.test:8080".
 */
export interface AllowEntry {
  readonly range: Cidr | undefined
  readonly hostname: string | undefined
  readonly port: number | undefined
}

export const parseAllowEntry = (text: string): AllowEntry | undefined => {
  const trimmed = text.trim()
  let hostPart = trimmed
  let port: number | undefined
  const bracketed = /^\[([^\]]+)\](?::(\d+))?(\/\d+)?$/.exec(trimmed)
  if (bracketed !== null) {
    hostPart = bracketed[1]! + (bracketed[3] ?? "")
    port = bracketed[2] === undefined ? undefined : Number(bracketed[2])
  } else if (isIP(trimmed.split("/")[0]!) !== 6) {
    const withPort = /^(.+):(\d+)$/.exec(trimmed)
    if (withPort !== null) {
      hostPart = withPort[1]!
      port = Number(withPort[2])
    }
  }
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) return undefined
  const range = parseCidr(hostPart)
  if (range !== undefined) return { range, hostname: undefined, port }
  if (/^[a-z0-9.-]+$/i.test(hostPart) && !hostPart.includes("/")) {
    return { range: undefined, hostname: hostPart.toLowerCase(), port }
  }
  return undefined
}

/**
 * Whether an allow-list entry covers a connection: the URL's host name or the resolved address must
 * match, and so must the port when the entry names one.
 */
export const allowEntryMatches = (
  entry: AllowEntry,
  target: { readonly hostname: string; readonly address: IpAddress; readonly port: number }
): boolean => {
  if (entry.port !== undefined && entry.port !== target.port) return false
  if (entry.hostname !== undefined) return entry.hostname === target.hostname.toLowerCase()
  if (entry.range === undefined) return false
  if (cidrContains(entry.range, target.address)) return true
  const v4 = embeddedIpv4(target.address)
  return v4 !== undefined && cidrContains(entry.range, v4)
}
