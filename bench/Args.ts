/** Command-line flags of the benchmarks: `--name` alone, or `--name value`. */
const argv = process.argv.slice(2)

export const flag = (name: string): boolean => argv.includes(`--${name}`)

export const option = (name: string, fallback: string): string => {
  const at = argv.indexOf(`--${name}`)
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1]! : fallback
}
