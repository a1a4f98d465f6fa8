#!/usr/bin/env python3
"""Distinct English sentences for bench/search.ts --corpus (a library of real, distinct embeddings).

    apt-get install -y python3.11-doc groff  # Debian's HTML documentation of Python 3.11 (PSF licence)
    python3 bench/search-corpus.py > /tmp/sentences.txt

    # more lines: Debian's PostgreSQL, Perl (manual pages) and Java API documentation
    apt-get install -y postgresql-doc-15 perl-doc openjdk-17-doc
    # enough for 1M passages: the Linux kernel's, Django's, SQLAlchemy's, Erlang's, pandas' manuals
    apt-get install -y linux-doc-6.1 python-django-doc python-sqlalchemy-doc erlang-doc python-pandas-doc

Reads the prose paragraphs (<p>, <li>, <dd>, and javadoc's <div class="block">) of every page under
the HTML roots below that are installed (Python 3.11, PostgreSQL 15, the Java 17 API, and the five
manuals above),
and the paragraphs of the machine's manual pages (sections 1, 3, 5, 7, 8, rendered with groff),
splits them into sentences, keeps those of 6-40 words that are mostly letters, drops repeats and
shuffles them with a fixed seed, so two runs on the same machine print the same lines. The text
is bench input only, never shipped. ~57k sentences come from the Python documentation and the
rest from the manual pages: 380,477 lines in 3 min 50 s on one machine, 385,992 in 11 min on
another with more packages (ffmpeg, chromium) and slower cores; with the three packages above,
569,219 lines in 8 min 36 s (635,272 passages: 1M would need ~900k lines); with the five more,
917,244 lines in 7 min 53 s on an AVX-512 machine (1,036,294 passages). Each package's pages join
the one shuffled set: adding one changes every library cut from the file.
"""
import gzip
import html.parser
import pathlib
import random
import re
import subprocess
import sys

roots = [pathlib.Path(p) for p in ("/usr/share/doc/python3.11/html", "/usr/share/doc/postgresql-doc-15/html",
                                   "/usr/share/doc/openjdk-17-jre-headless/api", "/usr/share/doc/linux-doc-6.1/html",
                                   "/usr/share/doc/python-django-doc/html", "/usr/share/doc/python-sqlalchemy-doc/html",
                                   "/usr/share/doc/erlang-doc", "/usr/share/doc/python-pandas-doc/html")]
manuals = pathlib.Path("/usr/share/man")


class Prose(html.parser.HTMLParser):
    """Collects the text inside prose elements; code and navigation are skipped."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.skip = 0
        self.divs = []  # per open <div>: whether it is a javadoc description block
        self.buffer = []
        self.paragraphs = []

    def handle_starttag(self, tag, attrs):
        if tag in ("pre", "script", "style", "nav"):
            self.skip += 1
        if tag == "div":
            self.divs.append(("class", "block") in attrs)
        if tag in ("p", "li", "dd") or (tag == "div" and self.divs[-1]):
            if self.depth == 0:
                self.buffer = []
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in ("pre", "script", "style", "nav") and self.skip > 0:
            self.skip -= 1
        block = tag == "div" and bool(self.divs) and self.divs.pop()
        if (tag in ("p", "li", "dd") or block) and self.depth > 0:
            self.depth -= 1
            if self.depth == 0:
                self.paragraphs.append(" ".join("".join(self.buffer).split()))

    def handle_data(self, data):
        if self.depth > 0 and self.skip == 0:
            self.buffer.append(data)


def manual_paragraphs(page):
    """The indented prose blocks of one rendered manual page (headings and option lists left out)."""
    source = gzip.decompress(page.read_bytes()) if page.suffix == ".gz" else page.read_bytes()
    if source.startswith(b".so "):
        return []
    text = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou"], input=source,
                          capture_output=True).stdout.decode("utf-8", "replace")
    paragraphs, lines = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("       ") and line.strip():
            lines.append(line.strip())
        elif lines:
            paragraphs.append(re.sub(r"\u2010 ", "", " ".join(lines)))
            lines = []
    return [" ".join(p.split()) for p in paragraphs]


def paragraphs():
    for root in roots:
        for page in sorted(root.rglob("*.html")):
            parser = Prose()
            parser.feed(page.read_text(encoding="utf-8", errors="replace"))
            yield from parser.paragraphs
    for section in ("man1", "man3", "man5", "man7", "man8"):
        for page in sorted((manuals / section).glob("*")):
            yield from manual_paragraphs(page)


sentences = set()
for paragraph in paragraphs():
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", paragraph):
        words = sentence.split()
        letters = sum(c.isalpha() for c in sentence)
        if 6 <= len(words) <= 40 and letters >= 0.7 * len(sentence.replace(" ", "")):
            sentences.add(sentence)

lines = sorted(sentences)
random.Random(24).shuffle(lines)
sys.stdout.write("\n".join(lines) + "\n")
sys.stderr.write(f"{len(lines)} sentences\n")
