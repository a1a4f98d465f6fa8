/**
 * The languages a submit may ask for, and which of them the configured model transcribes.
 *
 * `whisperLanguages` is the language list of Whisper's multilingual vocabulary, in token order
 * (the `lang_to_id` of whisper-base's generation_config.json; test/jobs/languages.test.ts reads
 * the model files and checks both lists). The codes are ISO 639-1 except two Whisper spells its
 * own way: `haw` (Hawaiian, ISO 639-2) and `jw` (Javanese; ISO 639-1 says `jv`).
 */
import { Schema } from "effect"

export const whisperLanguages = [
  "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi", "vi",
  "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk",
  "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw",
  "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo",
  "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su"
] as const

/**
 * Whisper's English-only checkpoints carry the `.en` suffix (tiny.en, base.en, …): their
 * vocabulary has no language tokens, and they transcribe English only.
 */
export const isEnglishOnlyModel = (model: string) => model.endsWith(".en")

/** The codes `model` transcribes (`auto` is accepted on every model besides these). */
export const modelLanguages = (model: string): ReadonlyArray<string> => isEnglishOnlyModel(model) ? ["en"] : whisperLanguages

/**
 * Why `language` is refused on `model`, in one sentence that says what is accepted; undefined
 * when the model transcribes it. `auto` on an English-only model means English.
 */
export const languageRefusal = (model: string, language: string): string | undefined => {
  if (language === "auto") return undefined
  if (isEnglishOnlyModel(model)) {
    return language === "en"
      ? undefined
      : `The configured model ${model} is English-only: language must be \`en\` or \`auto\` (which transcribes English), ` +
        `not \`${language}\`.`
  }
  return (whisperLanguages as ReadonlyArray<string>).includes(language)
    ? undefined
    : `language must be \`auto\` or one of the codes the model ${model} knows: ${whisperLanguages.join(", ")}; ` +
      `\`${language}\` is not one of them.`
}

export const Language = Schema.Literals(["auto", ...whisperLanguages]).annotate({
  description: "`auto` (detect; the default) or the recording's language as an ISO 639-1 code from Whisper's list " +
    "(`haw` and `jw` are Whisper's codes for Hawaiian and Javanese). An English-only model (VERBATIM_MODEL=" +
    "whisper-tiny.en) takes only `en` and `auto`; any other code is 422.",
  message: "language must be `auto` or an ISO 639-1 code Whisper knows (en, zh, de, es, fr, …; the full list is the " +
    "enum of `language` in /openapi.json)"
})
export type Language = typeof Language.Type
