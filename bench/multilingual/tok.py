import json
META = '\u2581'
class Unigram:
    def __init__(self, path):
        j = json.load(open(path)); self.j = j
        self.ids = {}
        for i, (p, s) in enumerate(j['pieces']):
            if p and p not in self.ids: self.ids[p] = i
        self.scores = [s for _, s in j['pieces']]
        self.maxlen = max(len(p) for p, _ in j['pieces'])
        self.norm = {int(k): ''.join(map(chr, v)) for k, v in j['normalize'].items()}
    def content(self, text):
        s = ''.join(self.norm.get(ord(c), c) for c in text)
        out = []
        for c in s:
            if c == ' ' and out and out[-1] == ' ': continue
            out.append(c)
        s = ''.join(out)
        if not s or s[0] != ' ': s = ' ' + s
        s = s.replace(' ', META)
        n = len(s); best = [-1e30] * (n + 1); bp = [0] * (n + 1); bf = [0] * (n + 1); best[0] = 0.0
        unk, us = self.j['unk'], self.j['unk_score']
        for i in range(n):
            if best[i] <= -1e29: continue
            for e in range(i + 1, min(n, i + self.maxlen) + 1):
                idx = self.ids.get(s[i:e])
                if idx is not None and idx != unk:
                    sc = best[i] + self.scores[idx]
                    if sc > best[e]: best[e], bp[e], bf[e] = sc, idx, i
            if best[i] + us > best[i + 1]: best[i + 1], bp[i + 1], bf[i + 1] = best[i] + us, -1, i
        toks = []; i = n
        while i > 0: toks.append(unk if bp[i] < 0 else bp[i]); i = bf[i]
        return toks[::-1]
    def encode(self, text, prefix=''):
        c = self.content(prefix + text)[: self.j['max_len'] - 2]
        return [self.j['bos']] + c + [self.j['eos']]
