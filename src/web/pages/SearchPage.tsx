/** `#/search?q=…`: one box over the whole library. Placeholder for now. */
export const SearchPage = ({ query }: { readonly query: string }) => (
  <section class="card" aria-labelledby="search-title">
    <h2 id="search-title">Search</h2>
    <p class="muted">Search over the library is not built yet{query === "" ? "" : <> (asked: “{query}”)</>}.</p>
  </section>
)
