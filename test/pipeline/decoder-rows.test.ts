import { describe, expect, it } from "vitest"
import { compactRows, takeRows } from "../../pipeline/whisper/Decoder.ts"

describe("batch compaction", () => {
  const rows = (n: number, size: number) => Float32Array.from({ length: n * size }, (_, i) => Math.floor(i / size) * 100 + (i % size))

  it("keeps the surviving rows in order, in place, as takeRows copies them", () => {
    for (const keep of [[0, 1, 2, 3], [1, 2, 3], [0, 2, 3], [0, 1, 3], [3], [0], [1, 3], []]) {
      const data = rows(4, 5)
      const copied = takeRows(rows(4, 5), 5, keep)
      const kept = compactRows(data, 5, keep)
      expect(Array.from(kept)).toEqual(Array.from(copied))
      // a view of the same memory: nothing was allocated for the rows
      expect(kept.buffer).toBe(data.buffer)
      expect(kept.length).toBe(keep.length * 5)
    }
  })

  it("compacts repeatedly, as rows finish one after another", () => {
    let data: Float32Array = rows(6, 3)
    data = compactRows(data, 3, [0, 2, 3, 4, 5]) // row 1 finished
    data = compactRows(data, 3, [1, 3]) // of 0,2,3,4,5 keep the 2nd and 4th: originals 2 and 4
    expect(Array.from(data)).toEqual([200, 201, 202, 400, 401, 402])
  })
})
