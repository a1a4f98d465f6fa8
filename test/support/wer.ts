/**
 * Word error rate as the media README defines it: lower-case, punctuation removed
 * (apostrophes inside words kept, hyphens as spaces), digits written as words
 * ("7" → "seven", "3,000" → "three thousand"), mr/mrs/dr spelled out; then
 * (substitutions + deletions + insertions) / reference words by edit distance.
 */

const ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
  "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
const TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

export const numberToWords = (n: number): string => {
  if (n < 20) return ONES[n]!
  if (n < 100) return TENS[Math.floor(n / 10)]! + (n % 10 ? ` ${ONES[n % 10]}` : "")
  if (n < 1000) return `${ONES[Math.floor(n / 100)]} hundred` + (n % 100 ? ` ${numberToWords(n % 100)}` : "")
  for (const [size, name] of [[1e9, "billion"], [1e6, "million"], [1e3, "thousand"]] as const) {
    if (n >= size) return `${numberToWords(Math.floor(n / size))} ${name}` + (n % size ? ` ${numberToWords(n % size)}` : "")
  }
  return String(n)
}

const ABBREVIATIONS: Record<string, string> = { mr: "mister", mrs: "missus", dr: "doctor" }

export const normalizeForWer = (text: string): Array<string> => {
  const withNumbers = text
    .toLowerCase()
    .replace(/(\d),(?=\d{3}\b)/g, "$1")
    .replace(/\d+/g, (d) => ` ${numberToWords(Number(d))} `)
  return withNumbers
    .replace(/-/g, " ")
    .replace(/[^\p{L}\p{N}\s']/gu, " ")
    .split(/\s+/)
    .map((w) => w.replace(/^'+|'+$/g, ""))
    .filter((w) => w.length > 0)
    .map((w) => ABBREVIATIONS[w] ?? w)
}

export const wordErrors = (reference: string, hypothesis: string): { errors: number; words: number } => {
  const r = normalizeForWer(reference)
  const h = normalizeForWer(hypothesis)
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j)
  for (let i = 1; i <= r.length; i++) {
    const cur = [i]
    for (let j = 1; j <= h.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1))
    }
    prev = cur
  }
  return { errors: prev[h.length]!, words: r.length }
}

export const wer = (reference: string, hypothesis: string): number => {
  const { errors, words } = wordErrors(reference, hypothesis)
  return words === 0 ? (errors === 0 ? 0 : 1) : errors / words
}
