/** How the website writes times (no browser): list clocks, clip-edge tenths, rounded durations. */
import { describe, expect, it } from "vitest"
import { clock } from "../../src/web/components/time.ts"
import { duration } from "../../src/web/format.ts"

describe("website times", () => {
  it("clock floors to the second (tenths floored too), m:ss under an hour, h:mm:ss from one", () => {
    expect(clock(0)).toBe("0:00")
    expect(clock(65.9)).toBe("1:05")
    expect(clock(59.9999999)).toBe("1:00")
    expect(clock(3725.5)).toBe("1:02:05")
    expect(clock(-3)).toBe("0:00")
    expect(clock(65.37, true)).toBe("1:05.3")
    expect(clock(3600.99, true)).toBe("1:00:00.9")
  })

  it("duration rounds to the second, and is a dash when unknown", () => {
    expect(duration(undefined)).toBe("–")
    expect(duration(null)).toBe("–")
    expect(duration(65.5)).toBe("1:06")
    expect(duration(3599.6)).toBe("1:00:00")
    expect(duration(36_000)).toBe("10:00:00")
  })
})
