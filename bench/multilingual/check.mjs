import { createRequire } from "node:module"
import * as fs from "node:fs"
const require = createRequire(new URL("../../package.json", import.meta.url))
const ort = require("onnxruntime-node")
const [model, tokFile] = process.argv.slice(2)
const j = JSON.parse(fs.readFileSync(tokFile, "utf8"))
const ids = new Map(); j.pieces.forEach(([p], i) => { if (p && !ids.has(p)) ids.set(p, i) })
const scores = Float64Array.from(j.pieces.map(([, s]) => s))
const maxLen = j.pieces.reduce((m, [p]) => Math.max(m, [...p].length), 0)
const norm = new Map(Object.entries(j.normalize).map(([k, v]) => [Number(k), String.fromCodePoint(...v)]))
const META = "\u2581"
const encode = (text, prefix) => {
  let s = ""
  for (const ch of prefix + text) { const r = norm.get(ch.codePointAt(0)); s += r ?? ch }
  s = s.replace(/ {2,}/g, " "); if (s[0] !== " ") s = " " + s
  const cs = [...s.replaceAll(" ", META)], n = cs.length
  const best = new Float64Array(n + 1).fill(-1e30), bp = new Int32Array(n + 1), bf = new Int32Array(n + 1); best[0] = 0
  for (let i = 0; i < n; i++) {
    if (best[i] <= -1e29) continue
    let sub = ""
    for (let e = i + 1; e <= Math.min(n, i + maxLen); e++) {
      sub += cs[e - 1]; const idx = ids.get(sub)
      if (idx !== undefined && idx !== j.unk) { const sc = best[i] + scores[idx]; if (sc > best[e]) { best[e] = sc; bp[e] = idx; bf[e] = i } }
    }
    if (best[i] + j.unk_score > best[i + 1]) { best[i + 1] = best[i] + j.unk_score; bp[i + 1] = -1; bf[i + 1] = i }
  }
  const toks = []; for (let i = n; i > 0; i = bf[i]) toks.push(bp[i] < 0 ? j.unk : bp[i])
  return [j.bos, ...toks.reverse().slice(0, j.max_len - 2), j.eos]
}
const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: "all" })
const embed = async (text, prefix) => {
  const t = encode(text, prefix), L = t.length
  const out = await session.run({ input_ids: new ort.Tensor("int64", BigInt64Array.from(t.map(BigInt)), [1, L]),
    attention_mask: new ort.Tensor("int64", new BigInt64Array(L).fill(1n), [1, L]) }, ["sentence_embedding"])
  return out.sentence_embedding.data
}
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0)
const PAIRS = JSON.parse(fs.readFileSync(new URL("pairs.json", import.meta.url), "utf8"))
for (const [name, P] of Object.entries(PAIRS)) {
  const r = []; for (const [a, b] of P) r.push(dot(await embed(a, "query: "), await embed(b, "query: ")).toFixed(3))
  console.log(name, "query/query", r.join(" "))
}
const sents = Object.values(PAIRS).flat(2)
await embed(sents[0], "query: ")
let t0 = performance.now(); for (let k = 0; k < 5; k++) for (const s of sents) encode(s, "query: "); const tt = (performance.now() - t0) / (5 * sents.length)
t0 = performance.now(); for (let k = 0; k < 5; k++) for (const s of sents) await embed(s, "query: ")
console.log(`node 1 thread one-at-a-time ${((performance.now() - t0) / (5 * sents.length)).toFixed(2)} ms/sentence (tokenizer ${tt.toFixed(3)} ms); rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`)
