/** Hash routes (`#/library`, `#/jobs/<id>`, …): the service serves one page, the hash picks the view. */
import { useEffect, useState } from "preact/hooks"

export type Route =
  | { readonly page: "signin" }
  | { readonly page: "signup"; readonly invite: string | undefined }
  | { readonly page: "library"; readonly view: "jobs" | "deleted" }
  | { readonly page: "transcript"; readonly jobId: string }
  | { readonly page: "clips"; readonly jobId: string }
  | { readonly page: "search"; readonly query: string }
  | { readonly page: "keys" }
  | { readonly page: "balance" }
  | { readonly page: "admin" }
  | { readonly page: "missing"; readonly path: string }

export const parseRoute = (hash: string): Route => {
  const raw = hash.replace(/^#/, "")
  const [path = "", queryString = ""] = raw.split("?", 2)
  const query = new URLSearchParams(queryString)
  const parts = path.split("/").filter((part) => part !== "").map(decodeURIComponent)
  const [first, second, third] = parts
  switch (first) {
    case undefined:
    case "library":
      return { page: "library", view: second === "deleted" ? "deleted" : "jobs" }
    case "signin":
      return { page: "signin" }
    case "signup":
      return { page: "signup", invite: query.get("invite") ?? undefined }
    case "jobs":
      if (second !== undefined && third === "clips") return { page: "clips", jobId: second }
      if (second !== undefined && third === undefined) return { page: "transcript", jobId: second }
      break
    case "search":
      return { page: "search", query: query.get("q") ?? "" }
    case "keys":
    case "balance":
    case "admin":
      return { page: first }
  }
  return { page: "missing", path }
}

export const navigate = (hash: string) => {
  location.hash = hash
}

export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash))
    addEventListener("hashchange", update)
    return () => removeEventListener("hashchange", update)
  }, [])
  return route
}
