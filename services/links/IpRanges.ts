/**
 * Address policy for outbound link fetching: which IP addresses a server-side fetch must never reach,
 * and the operator's allow-list that exempts chosen hosts (for example a test server on 127.0.0.1).
 *
 * Parsing and the special-purpose range tables come from ipaddr.js; this file holds only the policy:
 * every range ipaddr.js names other than "unicast" is refused (a name added by a later version is
 * refused too), and the IPv6 forms that carry an IPv4 address are judged by that address.
 */
import ipaddr from "ipaddr.js"
import { isIP } from "node:net"

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6

type Cidr = readonly [IpAddress, number]

export const familyOf = (address: IpAddress): 4 | 6 => (address.kind() === "ipv4" ? 4 : 6)

/**
 * Parses a literal IPv4 or IPv6 address (IPv6 may be bracketed, as in a URL host; a zone index is kept
 * by the parser and ignored by the range checks). Only the canonical dotted-quad IPv4 form is accepted:
 * node's `isIP` gates the input, because ipaddr.js also reads "127.1" and octal or hex parts.
 */
export const parseIp = (text: string): IpAddress | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  const family = isIP(bare.split("%")[0]!)
  if (family === 4) return ipaddr.IPv4.parse(bare)
  if (family === 6) return ipaddr.IPv6.parse(bare)
  return undefined
}

const parseCidr = (text: string): Cidr | undefined => {
  const [addressText, prefixText, ...rest] = text.split("/")
  const address = parseIp(addressText!)
  if (address === undefined || rest.length > 0) return undefined
  const max = address.kind() === "ipv4" ? 32 : 128
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined
  const prefix = prefixText === undefined ? max : Number(prefixText)
  return prefix <= max ? [address, prefix] : undefined
}

const cidr = (text: string): Cidr => parseCidr(text)!

const contains = ([range, prefix]: Cidr, address: IpAddress): boolean =>
  range.kind() === address.kind() && address.match(range, prefix)

/** The reason given in refusals, per ipaddr.js range name; names not listed read "reserved". */
const REASONS: Readonly<Record<string, string>> = {
  unspecified: "unspecified",
  loopback: "loopback",
  private: "private",
  uniqueLocal: "private",
  deprecatedSiteLocal: "private",
  // Local-use NAT64 (64:ff9b:1::/48); the well-known /96 prefix is judged by its IPv4 address below.
  rfc6052: "private",
  linkLocal: "link-local",
  carrierGradeNat: "carrier-grade NAT",
  multicast: "multicast"
}

/**
 * IPv6 forms that carry an IPv4 address, with the byte offset of those 4 bytes. ipaddr.js names
 * only some of them ("ipv4Mapped", "rfc6145", "6to4"), and not the deprecated IPv4-compatible ::/96.
 */
const EMBEDDING_V4: ReadonlyArray<readonly [Cidr, number]> = [
  [cidr("::ffff:0:0/96"), 12], // IPv4-mapped
  [cidr("::/96"), 12], // IPv4-compatible (deprecated)
  [cidr("::ffff:0:0:0/96"), 12], // IPv4-translated
  [cidr("64:ff9b::/96"), 12], // NAT64
  [cidr("2002::/16"), 2] // 6to4
]

/** The IPv4 address an IPv6 address stands for, if it is one of the embedding forms. */
export const embeddedIpv4 = (address: IpAddress): ipaddr.IPv4 | undefined => {
  if (address.kind() !== "ipv6") return undefined
  const found = EMBEDDING_V4.find(([range]) => contains(range, address))
  if (found === undefined) return undefined
  const bytes = address.toByteArray()
  return new ipaddr.IPv4(bytes.slice(found[1], found[1] + 4))
}

/**
 * Why an address must not be fetched from a server ("loopback", "private", ...), or undefined for a
 * public unicast address. `::` and `::1` sit inside the IPv4-compatible range, so they are judged first.
 */
export const blockedReason = (address: IpAddress): string | undefined => {
  const range = address.range()
  if (range === "unspecified" || range === "loopback") return REASONS[range]
  const v4 = embeddedIpv4(address)
  if (v4 !== undefined) return blockedReason(v4)
  return range === "unicast" ? undefined : REASONS[range] ?? "reserved"
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
  if (/^[a-z0-9.-]+$/i.test(hostPart)) return { range: undefined, hostname: hostPart.toLowerCase(), port }
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
  if (contains(entry.range, target.address)) return true
  const v4 = embeddedIpv4(target.address)
  return v4 !== undefined && contains(entry.range, v4)
}
