/**
 * A server's whole footprint from /proc (Linux): the process and its descendants, since the
 * embedded database runs in a child process of the server. For the benchmarks only.
 */
import * as fs from "node:fs"

/** `pid` and its descendants. */
export const processTree = (pid: number): Array<number> => {
  const children = new Map<number, Array<number>>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const ppid = Number(fs.readFileSync(`/proc/${entry}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid]
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []))
  return tree
}

const ticksPerMs = 100 / 1000 // USER_HZ is 100 on Linux

/** User + system CPU ms of one process or thread (`/proc/PID/stat` or `/proc/PID/task/TID/stat`). */
export const cpuMsOf = (statPath: string): number => {
  const fields = fs.readFileSync(statPath, "utf8").replace(/^.*\) /, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) / ticksPerMs
}

/** User + system CPU ms of the process tree (processes that have exited are not counted). */
export const treeCpuMs = (pid: number): number =>
  processTree(pid).reduce((sum, member) => {
    try {
      return sum + cpuMsOf(`/proc/${member}/stat`)
    } catch {
      return sum
    }
  }, 0)

/**
 * VmRSS and VmHWM (peak) in kB summed over the tree (the peak is the sum of each process's own
 * peak, an upper bound of the peak together).
 */
export const treeMemoryKb = (pid: number): { readonly rss: number; readonly peak: number } => {
  let rss = 0
  let peak = 0
  for (const member of processTree(pid)) {
    try {
      const status = fs.readFileSync(`/proc/${member}/status`, "utf8")
      const field = (name: string) => Number(/(\d+) kB/.exec(status.split("\n").find((l) => l.startsWith(name)) ?? "")?.[1] ?? 0)
      rss += field("VmRSS:")
      peak += field("VmHWM:")
    } catch {
      // gone meanwhile
    }
  }
  return { rss, peak }
}
