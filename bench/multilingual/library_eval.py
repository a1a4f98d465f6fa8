"""Cross-lingual moment search on the project's own material (research; see README.md).
Usage: python library_eval.py E5_DIR   (E5_DIR as written by fetch.sh; run with its venv's python)
Passages: sentences of every ../shared/media manifest text (deduplicated), a08 and a05 turns, the
decoys of test/search/library.ts (decoys.json) and the q01-q05 quality transcripts' segments.
Questions: English cases of test/search/library-quality.test.ts, Spanish translations of them, and
unanswerable questions in both languages. Prints hit@1 and cosine ranges per model.
With --relative (after E5_DIR): e5 only, each question's right passage (or top hit, unanswerable)
as cosine, cosine minus the mean of the next 50, z-score over the library, and its rank."""
import sys, os, json, re, glob, time, numpy as np, onnxruntime as ort
from tokenizers import Tokenizer
here = os.path.dirname(os.path.abspath(__file__)); repo = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, here); from tok import Unigram
shared = os.path.join(os.path.dirname(repo), 'shared'); e5dir = sys.argv[1] if len(sys.argv) > 1 else '/tmp/verbatim-e5'
so = ort.SessionOptions(); so.intra_op_num_threads = 1
mini = ort.InferenceSession(f'{shared}/models/minilm-l6-v2/onnx/model_quantized.onnx', so)
mt = Tokenizer.from_file(f'{shared}/models/minilm-l6-v2/tokenizer.json'); mt.no_padding(); mt.no_truncation()
def mini_emb(xs, q):
    out = []
    for x in xs:
        ids = np.array([mt.encode(x).ids], np.int64); m = np.ones_like(ids)
        h = mini.run(None, {'input_ids': ids, 'attention_mask': m, 'token_type_ids': np.zeros_like(ids)})[0][0].mean(0); out.append(h / np.linalg.norm(h))
    return np.array(out)
tk = Unigram(f'{e5dir}/tokenizer.json')
e5 = ort.InferenceSession(f'{e5dir}/model_q4_nbits4.onnx', so)
def e5_emb(xs, q):
    out = []
    for x in xs:
        ids = np.array([tk.encode(x, 'query: ' if q else 'passage: ')], np.int64)
        out.append(e5.run(['sentence_embedding'], {'input_ids': ids, 'attention_mask': np.ones_like(ids)})[0][0])
    return np.array(out)
relative = '--relative' in sys.argv
class R: models = {'minilm-l6-v2 (today)': mini_emb, 'multilingual-e5-small (4-bit, MatMulNBits)': e5_emb}
man = json.load(open(f'{shared}/media/manifest.json'))
P = []
for k, v in man.items():
    if v.get('turns'): P += [t['text'] for t in v['turns']]
    elif v.get('text'): P += [s.strip() for s in re.split(r'(?<=[.?!])\s+', v['text']) if s.strip()]
for t in json.load(open(f'{here}/decoys.json')):
    P += [x.strip() for x in re.split(r'(?<=[.?!])\s+', t) if x.strip()]
for f in sorted(glob.glob(f'{repo}/test/quality/transcripts/q0[1-5]*.json')):
    P += [s['text'].strip() for s in json.load(open(f))['segments']]
P = list(dict.fromkeys(P)); print('passages', len(P))
C = [("when is the library open", "¿Cuándo está abierta la biblioteca?", "reading room opens again at seven"),
     ("who is building wind turbines", "¿Quién está construyendo aerogeneradores?", "windmills on the ridge"),
     ("what did they decide about hiring", "¿Qué decidieron sobre las contrataciones?", "new hiring plan"),
     ("how fast is the shoreline retreating each year", "¿Cuántos metros de acantilado pierde la costa cada año?", "two meters of cliff every year"),
     ("what is the price of building barriers against the ocean", "¿Cuánto cuesta construir muros contra el mar?", "twenty thousand dollars per meter"),
     ("who plants vegetation on the sandy hills every weekend", "¿Quién planta vegetación en las dunas cada fin de semana?", "volunteers plant dune grass"),
     ("who is the scientist on the show", "¿Quién es el científico del programa?", "a geologist who studies coastal erosion"),
     ("how much land can a single bad night take away", "¿Cuánta tierra puede llevarse una sola mala noche?", "ten meters in a single night"),
     ("should I expect a downpour this evening", "¿Va a llover mucho esta noche?", "heavy rain"),
     ("what has to change in the agreement before signing", "¿Qué hay que cambiar en el acuerdo antes de firmarlo?", "payment terms need another look"),
     ("what keeps community journalism going", "¿Qué mantiene vivo el periodismo local?", "local newspapers"),
     ("what day does the market open", "¿Qué día abre el mercado?", "El mercado abre todos los sábados"),
     ("where can I buy fresh local vegetables", "¿Dónde puedo comprar verduras frescas de la zona?", "verduras")]
U = [("stock market crash in Tokyo", "¿Por qué se desplomó la bolsa de Tokio?"), ("who won the football world cup in 1998", "¿Quién ganó el mundial de fútbol de 1998?"),
     ("how do I reset my router password", "¿Cómo cambio la contraseña del router?"), ("what is the recipe for chocolate cake", "¿Cuál es la receta del pastel de chocolate?"),
     ("when was the Eiffel Tower built", "¿Cuándo se construyó la Torre Eiffel?"), ("what is the capital of Australia", "¿Cuál es la capital de Australia?")]
for name, f in ({} if relative else R.models).items():
    t = time.perf_counter(); E = f(P, False); tp = (time.perf_counter() - t) / len(P)
    print(f'== {name}  ({tp*1000:.1f} ms/passage embedding, 1 thread)')
    for lang, qi in (('EN', 0), ('ES', 1)):
        Q = f([c[qi] for c in C], True) @ E.T
        hits, right, miss = 0, [], []
        for i, c in enumerate(C):
            ok = [j for j, p in enumerate(P) if c[2] in p]
            top = int(Q[i].argmax()); right.append(Q[i][ok].max())
            if top in ok: hits += 1
            else: miss.append(f'{c[qi]!r} -> {P[top][:50]!r} ({Q[i][top]:.3f} vs {Q[i][ok].max():.3f})')
        UQ = f([u[qi] for u in U], True) @ E.T
        print(f'  {lang} questions: hit@1 {hits}/{len(C)} | right-passage cos {min(right):.3f}-{max(right):.3f} | unanswerable top cos {UQ.max(1).min():.3f}-{UQ.max(1).max():.3f}')
        for m in miss: print('     miss:', m)

def relative_scores(f):
    """Whether a score relative to the question's own cosines separates right hits from unanswerable ones."""
    E = f(P, False)
    def line(row, c, rank, text):
        rest = np.sort(row)[::-1][1:51]
        print(f'   {c:.3f}  {c - rest.mean():+.3f}  z {(c - row.mean()) / row.std():.2f}  rank {rank}  {text[:45]}')
    for lang, qi in (('EN', 0), ('ES', 1)):
        Q = f([c[qi] for c in C], True) @ E.T
        print(f'{lang} right passage: cosine, minus mean of the next 50, z, rank')
        for i, c in enumerate(C):
            r = max(Q[i][j] for j, p in enumerate(P) if c[2] in p)
            line(Q[i], r, int((Q[i] > r).sum()) + 1, c[qi])
        UQ = f([u[qi] for u in U], True) @ E.T
        print(f'{lang} unanswerable, top hit:')
        for i, u in enumerate(U):
            line(UQ[i], UQ[i].max(), 1, u[qi])


if relative:
    relative_scores(e5_emb)
