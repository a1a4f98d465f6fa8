/**
 * Library search: indexing a finished job's transcript and answering natural-language
 * questions over one account's library. Storage and first ranking are the backend's
 * (Postgres or Meilisearch, see SearchBackend.ts); this service decides what a hit is.
 *
 * A hit is a moment, not a passage: the segment inside a matching passage that matches
 * best, with its own times. Windows find the right stretch of talk; a second, segment-only
 * ranking restricted to the same jobs picks the moment inside each window. Hits
 * overlapping in time within one job are merged. `score` is that fused reciprocal-rank score: comparable within one answer only.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Transcript } from "../src/contract/domain/Transcript.ts"
import { Embedder } from "./Embedder.ts"
import { foldedWords, foldWord, type Highlight, highlights, queryTerms, questionLanguage, termMatches } from "./Highlights.ts"
import { cutPassages, type Moment } from "./Passages.ts"
import { QueryTranslator } from "./QueryTranslator.ts"
import { relevanceOf } from "./Relevance.ts"
import { type Candidate, type JobMeta, type LanguageBound, type LanguageJobs, SearchBackend } from "./SearchBackend.ts"

export const QUERY_MAX_CHARS = 500
export const DEFAULT_LIMIT = 10
export const MAX_LIMIT = 50
/** Passages ranked before narrowing to moments. */
const CANDIDATES = 40
/**
 * A language's recordings are searched by name (their passages ranked exactly, see
 * `questionVariants`) when they are at most this many holding at most this many passages, and
 * they are counted up to that bound.
 */
export const NAMED_LANGUAGE: LanguageBound = { jobs: 200, passages: 10_000 }
/**
 * Up to this many passages a language's recordings are always searched by name; above it (up to
 * `NAMED_LANGUAGE`) only when the other language holds more than the bound. Measured (2026-11-28,
 * PGlite, 2 cores, the other core busy): ranking 20,000 passages exactly took 116 ms, the HNSW
 * walk over the same 20,000 24 ms; so a language that is most of the library is walked with a
 * language filter, and one that is a small part of it (where a filtered walk reads far into the
 * graph) is ranked exactly while that stays cheap.
 */
export const ALWAYS_NAMED_PASSAGES = 5_000
/** A translated wording's hits judged back in the question's language (see `Judge`): its best this many. */
const JUDGED = 3
/** Segments ranked to choose the moment inside the candidate windows. */
const MOMENT_CANDIDATES = 100

/**
 * A moment that is itself a question ("Why not build more sea walls?") echoes the
 * searcher's question and is rarely what they look for: the answer that follows is.
 */
const QUESTION_FACTOR = 0.75
/** `score` = fused rank score × (RELEVANCE_BASE + relevance): relevance reorders, rank still counts. */
const RELEVANCE_BASE = 0.5
const isQuestion = (m: Moment): boolean => /[?？]["”»]?$/u.test(m.text.trim())

/**
 * A translated wording's hits are also judged in the question's own language: each hit's text
 * translated `from` → `to` and compared with the question `q` as asked.
 */
interface Judge {
  readonly q: string
  readonly from: string
  readonly to: string
  /**
   * The judged relevance replaces the hit's own instead of bettering it: for a Spanish question
   * about Spanish text, where MiniLM's Spanish cosines separate little (an unrelated Spanish hit
   * at 0.585 for "¿Quién ganó el mundial de fútbol de 1998?").
   */
  readonly replace?: boolean
}

/** One wording of the question and the request it is searched with. */
interface Variant {
  readonly q: string
  readonly request: SearchRequest
  readonly judge?: Judge | undefined
}

export class InvalidSearchQuery extends Schema.TaggedError<InvalidSearchQuery>()("InvalidSearchQuery", {
  message: Schema.String
}) {}

export interface SearchRequest {
  readonly accountId: string
  /** 1..500 characters (after trimming). */
  readonly q: string
  /** 1..50, default 10. */
  readonly limit?: number | undefined
  readonly jobIds?: ReadonlyArray<string> | undefined
  /** Jobs whose passages must not be returned (nor crowd out others among the candidates). */
  readonly excludeJobIds?: ReadonlyArray<string> | undefined
  /** ISO 639-1 of the transcripts to search. */
  readonly language?: string | undefined
  /** Jobs created at or after this time. */
  readonly since?: Date | undefined
  /** Jobs created before this time. */
  readonly until?: Date | undefined
  /** 0..1: hits whose `relevance` is below are left out (default 0: none). */
  readonly minRelevance?: number | undefined
}

export interface SearchHit {
  readonly job_id: string
  readonly filename: string | null
  readonly start: number
  readonly end: number
  readonly text: string
  readonly speaker: string | null
  readonly score: number
  /** 0..1, comparable across questions: see `relevanceOf`. */
  readonly relevance: number
  /** Character ranges of `text` that share a stem with the question's words. */
  readonly highlights: ReadonlyArray<Highlight>
}

interface ScoredMoment {
  readonly jobId: string
  readonly filename: string | null
  readonly moment: Moment
  score: number
}

/** Cosine of two L2-normalised embeddings. */
const dot = (a: Float32Array, b: Float32Array): number => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}

const momentKey = (jobId: string, m: { readonly start: number; readonly end: number }) => `${jobId}@${m.start}-${m.end}`

/** The moment of a window: best-ranked segment inside it, else the most words of the question. */
const momentOf = (candidate: Candidate, segmentRank: ReadonlyMap<string, number>, terms: ReadonlyArray<string>): Moment => {
  const moments = candidate.passage.moments
  let best = moments[0]!
  let bestRank = Infinity
  for (const m of moments) {
    const rank = segmentRank.get(momentKey(candidate.passage.jobId, m))
    if (rank !== undefined && rank < bestRank) {
      best = m
      bestRank = rank
    }
  }
  if (bestRank < Infinity) return best
  let most = 0
  for (const m of moments) {
    const words = foldedWords(m.text)
    const shared = terms.filter((t) => words.some((w) => termMatches(t, w))).length
    if (shared > most) {
      best = m
      most = shared
    }
  }
  return best
}

/** Question moment (by key) → the moment answering it, from the windows' runs of moments. */
const answers = (windows: ReadonlyArray<Candidate>): Map<string, Moment> => {
  const out = new Map<string, Moment>()
  for (const w of windows) {
    const moments = w.passage.moments
    for (let i = 0; i + 1 < moments.length; i++) {
      const q = moments[i]!
      const next = moments[i + 1]!
      if (isQuestion(q) && (q.speaker === null || next.speaker !== q.speaker)) out.set(momentKey(w.passage.jobId, q), next)
    }
  }
  return out
}

/** Best first; a moment overlapping an earlier hit of the same job joins that hit. */
export const mergeMoments = (
  scored: ReadonlyArray<ScoredMoment>,
  limit: number,
  terms: ReadonlyArray<string>
): Array<Omit<SearchHit, "relevance">> => {
  const hits: Array<{ jobId: string; filename: string | null; moments: Array<Moment>; start: number; end: number; score: number }> = []
  for (const s of [...scored].sort((a, b) => b.score - a.score)) {
    const into = hits.find((h) => h.jobId === s.jobId && s.moment.start < h.end && s.moment.end > h.start)
    if (into !== undefined) {
      into.moments.push(s.moment)
      into.start = Math.min(into.start, s.moment.start)
      into.end = Math.max(into.end, s.moment.end)
      continue
    }
    if (hits.length === limit) continue
    hits.push({ jobId: s.jobId, filename: s.filename, moments: [s.moment], start: s.moment.start, end: s.moment.end, score: s.score })
  }
  return hits.map((h) => {
    const moments = [...h.moments].sort((a, b) => a.start - b.start)
    const text = moments.map((m) => m.text).join(" ")
    return {
      job_id: h.jobId,
      filename: h.filename,
      start: h.start,
      end: h.end,
      text,
      speaker: moments[0]!.speaker,
      score: h.score,
      highlights: highlights(text, terms)
    }
  })
}

/**
 * The jobs a wording in `found`'s language is searched among: by name (those of the request's
 * `jobIds`, if any) when they hold at most `ALWAYS_NAMED_PASSAGES`, or up to `NAMED_LANGUAGE` when
 * the `against` language holds more than that bound; otherwise the request's own `jobIds`
 * (undefined: all), the language then being a filter of the walk.
 */
export const languageScope = (
  found: LanguageJobs,
  against: LanguageJobs,
  jobIds: ReadonlyArray<string> | undefined
): ReadonlyArray<string> | undefined =>
  found.more || (found.passages > ALWAYS_NAMED_PASSAGES && !against.more) ? jobIds : requestedOf(found, jobIds)

/** The listed jobs of `found` that the request's `jobIds` (undefined: all) allow. */
const requestedOf = (found: LanguageJobs, jobIds: ReadonlyArray<string> | undefined): ReadonlyArray<string> =>
  found.jobIds.filter((id) => jobIds === undefined || jobIds.includes(id))

/**
 * The hits of the question's wordings (as asked, translated) as one answer, best first: hits
 * of one job overlapping in time are one, the one more relevant to its wording, at the better
 * of their scores. Each wording's relevance is on the same scale (its own language's
 * midpoint), so the better one is the evidence that the moment answers the question.
 */
export const mergeVariants = (lists: ReadonlyArray<ReadonlyArray<SearchHit>>, limit: number): Array<SearchHit> => {
  if (lists.length === 1) return [...lists[0]!].sort((a, b) => b.score - a.score).slice(0, limit)
  const kept: Array<SearchHit> = []
  for (const hit of lists.flat().sort((a, b) => b.score - a.score)) {
    const at = kept.findIndex((k) => k.job_id === hit.job_id && hit.start < k.end && hit.end > k.start)
    if (at < 0) kept.push(hit)
    else if (hit.relevance > kept[at]!.relevance) kept[at] = { ...hit, score: kept[at]!.score }
  }
  return kept.sort((a, b) => b.score - a.score).slice(0, limit)
}

export class SearchIndex extends Context.Service<SearchIndex, {
  /** Cuts, embeds and stores the job's passages, replacing any it had. Returns how many. */
  indexJob(accountId: string, jobId: string, meta: JobMeta, transcript: Transcript): Effect.Effect<number>
  /** Removes every passage of the job (delete and purge; restore indexes it again). */
  removeJob(jobId: string): Effect.Effect<void>
  /** The account's best moments for the question, best first; never another account's. */
  search(request: SearchRequest): Effect.Effect<ReadonlyArray<SearchHit>, InvalidSearchQuery>
}>()("verbatim/search/SearchIndex") {
  static readonly layer = Layer.effect(
    SearchIndex,
    Effect.gen(function*() {
      const backend = yield* SearchBackend
      const embedder = yield* Embedder
      // Optional: without one, questions are searched as asked.
      const translator = yield* Effect.serviceOption(QueryTranslator)

      const indexJob = Effect.fn("SearchIndex.indexJob")(
        function*(accountId: string, jobId: string, meta: JobMeta, transcript: Transcript) {
          const passages = cutPassages(transcript)
          const vectors = yield* embedder.embed(passages.map((p) => p.text))
          yield* backend.replaceJob(accountId, jobId, meta, passages.map((p, i) => ({ ...p, embedding: vectors[i]! })))
          return passages.length
        }
      )

      const removeJob = Effect.fn("SearchIndex.removeJob")(function*(jobId: string) {
        yield* backend.removeJob(jobId)
      })

      const search = Effect.fn("SearchIndex.search")(function*(request: SearchRequest) {
        const q = request.q.trim()
        if (q.length === 0 || q.length > QUERY_MAX_CHARS) {
          return yield* new InvalidSearchQuery({ message: `q must be 1 to ${QUERY_MAX_CHARS} characters` })
        }
        const limit = request.limit ?? DEFAULT_LIMIT
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
          return yield* new InvalidSearchQuery({ message: `limit must be an integer from 1 to ${MAX_LIMIT}` })
        }
        const variants = yield* questionVariants(q, request)
        // The question as asked first (a judge compares with it), whether or not it is searched.
        const texts = Array.from(new Set([q, ...variants.map((v) => v.q)]))
        const embedded = yield* embedder.embed(texts)
        const vectorOf = (text: string) => embedded[texts.indexOf(text)]!
        const lists = yield* Effect.forEach(variants, (variant) =>
          rankHits(variant.q, vectorOf(variant.q), variant.request, limit, variant.judge === undefined ? undefined : { ...variant.judge, vector: vectorOf(variant.judge.q) }))
        const minRelevance = request.minRelevance ?? 0
        return mergeVariants(lists, limit).filter((h) => h.relevance >= minRelevance)
      })

      /**
       * The question as asked, and its translation when a translator is configured, the question
       * is recognisably English or Spanish and the account has recordings in the other language:
       * the translation is searched among those recordings only. The embedder is English-only:
       * "¿Cuántos metros de acantilado pierde la costa cada año?" shares no word with "…we lose
       * about two meters of cliff every year" and its cosine says nothing; "How many metres of
       * cliff loses the coast every year?" finds it.
       */
      const questionVariants = Effect.fn("SearchIndex.questionVariants")(function*(q: string, request: SearchRequest) {
        const asked: Array<Variant> = [{ q, request }]
        const language = questionLanguage(q)
        const other = language === "es" ? "en" : language === "en" ? "es" : undefined
        if (Option.isNone(translator) || language === undefined || other === undefined) return asked
        if (!translator.value.directions.some((d) => d.from === language && d.to === other)) return asked
        // A search restricted to the question's own language has nothing to find in the other.
        if (request.language !== undefined && request.language !== other) return asked
        // The jobs of each language: by name when they are a few passages, or a small part of the
        // library (`ALWAYS_NAMED_PASSAGES`), else undefined (a language filter, an HNSW walk).
        const otherFound = yield* backend.languageJobs(request.accountId, other, NAMED_LANGUAGE)
        if (!otherFound.more && requestedOf(otherFound, request.jobIds).length === 0) return asked
        const ownFound = yield* backend.languageJobs(request.accountId, language, NAMED_LANGUAGE)
        const otherJobs = languageScope(otherFound, ownFound, request.jobIds)
        const translated = yield* translator.value.translate(q, language, other)
        if (translated === undefined || foldWord(translated) === foldWord(q)) return asked
        // The other way too when it can: a Spanish hit for an English question is judged by its
        // English translation against the question as asked (MiniLM separates English from
        // English; Spanish questions from Spanish text it hardly does, see search/README.md).
        const back = translator.value.directions.some((d) => d.from === other && d.to === language)
        const judge = back && language === "en" ? { q, from: other, to: language } : undefined
        const translation: Variant = { q: translated, request: { ...request, language: other, jobIds: otherJobs }, judge }
        // The question as asked, then, among its own language's recordings when they are few
        // (measured at 100k English passages: a Spanish question ranked over the whole library and
        // then again translated took 87–97 ms, median); all of them otherwise. A job stored
        // without a language is then left out of both wordings.
        const ownJobs = languageScope(ownFound, otherFound, request.jobIds)
        if (ownJobs !== undefined && ownJobs.length === 0) return [translation]
        // A Spanish question's own hits are judged in English (the direction just used): the
        // question's translation against theirs.
        const ownJudge = language === "es" ? { q: translated, from: language, to: other, replace: true } : undefined
        return [{ q, request: ownJobs === undefined ? request : { ...request, jobIds: ownJobs }, judge: ownJudge }, translation]
      })

      /** One wording's hits, ranked and weighed by their relevance to that wording, before `min_relevance`. */
      const rankHits = Effect.fn("SearchIndex.rankHits")(function*(
        q: string,
        vector: Float32Array,
        request: SearchRequest,
        limit: number,
        judge?: Judge & { readonly vector: Float32Array }
      ) {
        const base = {
          accountId: request.accountId,
          q,
          vector,
          jobIds: request.jobIds,
          excludeJobIds: request.excludeJobIds,
          language: request.language,
          since: request.since,
          until: request.until
        }
        const candidates = yield* backend.candidates({ ...base, limit: CANDIDATES })
        const windows = candidates.filter((c) => c.passage.kind === "window")
        // The segments inside the candidate windows only: a moment is chosen among a window's
        // own. Ranking every segment of the windows' jobs instead cost up to 0.4 s at 100k
        // passages (40 long jobs: ~10k segments ranked exactly).
        const segments = windows.length === 0 ? [] : yield* backend.candidates({
          ...base,
          kind: "segment",
          jobIds: Array.from(new Set(windows.map((c) => c.passage.jobId))),
          within: windows.map((c) => ({ jobId: c.passage.jobId, start: c.passage.start, end: c.passage.end })),
          limit: MOMENT_CANDIDATES
        })
        const segmentRank = new Map(segments.map((s, i) => [momentKey(s.passage.jobId, s.passage), i]))
        const terms = queryTerms(q)

        // A moment scores the best of its windows and its own segment. Not a sum: a window
        // and its segments carry the same words, so adding them favours every long
        // recording over a one-sentence one (measured: a one-sentence answer lost to a
        // long recording's weaker window), and overlapping windows must not add up.
        const byMoment = new Map<string, Omit<ScoredMoment, "score"> & { window: number; segment: number }>()
        for (const candidate of candidates) {
          const moment = candidate.passage.kind === "segment"
            ? candidate.passage.moments[0]!
            : momentOf(candidate, segmentRank, terms)
          const key = momentKey(candidate.passage.jobId, moment)
          const found = byMoment.get(key) ?? { jobId: candidate.passage.jobId, filename: candidate.passage.filename, moment, window: 0, segment: 0 }
          found[candidate.passage.kind] = Math.max(found[candidate.passage.kind], candidate.score)
          byMoment.set(key, found)
        }
        const scored = Array.from(byMoment.values(), (m) => ({
          ...m,
          score: Math.max(m.window, m.segment) *
            (isQuestion(m.moment) ? QUESTION_FACTOR : 1)
        }))
        // A question in the recording that matches is evidence for its answer: the moment
        // right after it (another speaker's, or the next one when nobody is labelled),
        // found in a candidate window, ranks at least as the question would unpenalised.
        // Measured on the panel: "why do night workers sleep badly" → the host's opening
        // line (which says "night shift" and "sleep") ranked above the guest's answer.
        const following = answers(windows)
        /** Answer moment (by key) → the text of the question in the recording that lifted it. */
        const liftedBy = new Map<string, { readonly jobId: string; readonly start: number; readonly question: string }>()
        for (const m of [...scored]) {
          if (!isQuestion(m.moment)) continue
          const answer = following.get(momentKey(m.jobId, m.moment))
          if (answer === undefined) continue
          const lifted = Math.max(m.window, m.segment)
          const key = momentKey(m.jobId, answer)
          liftedBy.set(key, { jobId: m.jobId, start: answer.start, question: m.moment.text })
          const known = scored.find((s) => momentKey(s.jobId, s.moment) === key)
          if (known !== undefined) known.score = Math.max(known.score, lifted)
          else scored.push({ jobId: m.jobId, filename: m.filename, moment: answer, window: 0, segment: 0, score: lifted })
        }
        const hits = mergeMoments(scored, limit, terms)
        // Relevance is the hit's own: its text against the question, whatever it ranked. A
        // hit whose text is a stored passage's has that passage's cosine from the backend
        // (embedding ~10 hits again was a third of a query at 100k passages); the others
        // (merged moments, or a backend without cosines) are embedded here.
        const known = new Map<string, number>()
        for (const c of [...candidates, ...segments]) if (c.cosine !== undefined) known.set(c.passage.text, c.cosine)
        // The question that lifted a hit's answer, if any (the hit holds that answer).
        const questionOf = (h: Omit<SearchHit, "relevance">): string | undefined => {
          for (const lift of liftedBy.values()) {
            if (lift.jobId === h.job_id && lift.start >= h.start && lift.start < h.end) return lift.question
          }
          return undefined
        }
        const liftingQuestions = hits.map(questionOf)
        const unknown = Array.from(new Set([
          ...hits.map((h) => h.text),
          ...liftingQuestions.filter((t): t is string => t !== undefined)
        ])).filter((text) => !known.has(text))
        const vectors = yield* embedder.embed(unknown)
        unknown.forEach((text, i) => known.set(text, dot(vector, vectors[i]!)))
        // The final order weighs the rank score by the hit's own relevance: a moment ranked on
        // a window it sits in goes below a hit that itself says what was asked ("who researches
        // sleep": the opening naming the sleep researcher, not the answer to a question about
        // sleep). An answer lifted by the recording's own question is weighed by the better of
        // its relevance and the question's discounted as a question moment is (QUESTION_FACTOR):
        // an answer rarely repeats the question's words, and without this the question still
        // ranked above its answer ("who takes care of watering while school is closed" → "Who
        // will water the garden during the summer holidays?" 0.882, its answer "Twelve families
        // signed up…" 0.126). Undiscounted, the question's 0.989 lifted "The body clock expects
        // darkness…" (0.747) above the opening that names the sleep researcher (0.984).
        // The `relevance` returned (and `min_relevance`) stays the hit's own.
        // A translated wording's hits, also judged in the question's own language (see `Judge`).
        const judged: Array<number | undefined> = []
        if (judge !== undefined && Option.isSome(translator)) {
          // The best few only (`hits` is best first): each costs a translation and an embedding (~4 ms).
          const translations = yield* Effect.forEach(hits.slice(0, JUDGED), (h) => translator.value.translate(h.text, judge.from, judge.to), {
            concurrency: "unbounded"
          })
          const texts = translations.filter((t): t is string => t !== undefined)
          const embedded = yield* embedder.embed(texts)
          translations.forEach((text, i) => {
            const h = hits[i]!
            judged[i] = text === undefined ? undefined : relevanceOf(judge.q, text, dot(judge.vector, embedded[texts.indexOf(text)]!), h.speaker)
          })
        }
        return hits
          .map((h, i) => {
            const own = relevanceOf(q, h.text, known.get(h.text)!, h.speaker)
            const relevance = judged[i] === undefined ? own : judge?.replace === true ? judged[i] : Math.max(own, judged[i])
            const question = liftingQuestions[i]
            const weight = question === undefined
              ? relevance
              : Math.max(relevance, QUESTION_FACTOR * relevanceOf(q, question, known.get(question)!))
            return { ...h, relevance, score: h.score * (RELEVANCE_BASE + weight) }
          })
      })

      return SearchIndex.of({ indexJob, removeJob, search })
    })
  )
}
