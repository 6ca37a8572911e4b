"""Write examples/corpus.txt: a small text for `lionsim bench --workload gpt --data FILE`.

The text is English-like sentences from lionsim's own grammar (lionsim.workloads.datasets.
corpus: no bundled or copyrighted text), with a seed other than the one the gpt workload
uses when it generates its data, so `--data examples/corpus.txt` trains on text it has not
generated itself. Any UTF-8 text file works the same way (a book, your logs, code).

    python examples/make_corpus.py            # rewrites examples/corpus.txt (48,000 characters)
"""

from pathlib import Path

from lionsim.workloads.datasets.corpus import generate_corpus

CHARACTERS = 48_000
SEED = 2024

if __name__ == "__main__":
    path = Path(__file__).with_name("corpus.txt")
    path.write_text(generate_corpus(CHARACTERS, SEED), encoding="utf-8")
    print(f"wrote {path} ({CHARACTERS:,} characters)")
