"""Makes the quality set's recordings (q01–q04 .flac) from the turns of their .json annotations
and writes each turn's and each sentence's times back into them. q05/q06 are shared/media a05
and a08 (not made here).

Voices as named in each file's "voices": festival cmu_us_slt_arctic_hts and kal_diphone,
espeak-ng en-us+m3 / en-us+f3 (apt-get install festival festvox-kallpc16k festvox-us-slt-hts
espeak-ng sox). Each sentence is synthesised alone and followed by 0.35 s of silence, each turn
by 0.3 s more; 16 kHz mono FLAC. Run: python3 test/quality/make.py
"""
import glob, json, os, re, subprocess, tempfile

here = os.path.dirname(os.path.abspath(__file__))


def synth(voice, text, raw):
    if voice.startswith("espeak-ng "):
        subprocess.run(["espeak-ng", "-v", voice.split()[1], "-s", "160", "-w", raw, text], check=True)
    else:
        name = {"festival slt": "(voice_cmu_us_slt_arctic_hts)", "festival kal": "(voice_kal_diphone)"}[voice]
        subprocess.run(["text2wave", "-eval", name, "-o", raw], input=text, text=True, check=True)


def seconds(path):
    return float(subprocess.run(["soxi", "-D", path], capture_output=True, text=True, check=True).stdout)


for annotation in sorted(glob.glob(os.path.join(here, "q0*.json"))):
    meta = json.load(open(annotation))
    if "file" not in meta:
        continue
    with tempfile.TemporaryDirectory() as tmp:
        turns, at = [], 0.0
        for i, turn in enumerate(meta["turns"]):
            parts, sentences, t = [], [], at
            for k, sentence in enumerate(re.split(r"(?<=[.?!])\s+", turn["text"])):
                raw, part = f"{tmp}/{i}_{k}_raw.wav", f"{tmp}/{i}_{k}.wav"
                synth(meta["voices"][turn["speaker"]], sentence, raw)
                subprocess.run(["sox", raw, "-r", "16000", "-c", "1", "-b", "16", part, "norm", "-3", "pad", "0", "0.35"], check=True)
                length = seconds(part)
                sentences.append({"start": round(t, 2), "end": round(t + length - 0.35, 2)})
                t += length
                parts.append(part)
            out = f"{tmp}/{i}.wav"
            subprocess.run(["sox", *parts, out, "pad", "0", "0.3"], check=True)
            length = seconds(out)
            turns.append(out)
            turn["start"], turn["end"], turn["sentences"] = round(at, 2), round(at + length - 0.65, 2), sentences
            at += length
        subprocess.run(["sox", *turns, os.path.join(here, meta["file"])], check=True)
    json.dump(meta, open(annotation, "w"), indent=1, ensure_ascii=False)
    print(meta["file"], round(at, 1), "s")
