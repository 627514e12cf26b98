"""The organisers' packet upload (``/moderator/upload/``): one question file of any format
``manage.py import_questions`` reads, imported by the same code (``competition.importers``:
``parse_file`` reads and validates the whole file, ``write_questions`` stores it in one
transaction), so a bad file writes nothing and is refused with the command's line-numbered error,
naming the uploaded file instead of the command's path."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from django import forms

from competition.importers import FORMATS, QuestionFileError, parse_file, rename_set, write_questions

#: Formats whose set (and for the runner, packet) is named after the file's folder (a .docx packet: its
#: packet after the file's name), which an upload
#: does not have: the organiser names the set, and the file is read from a folder of that name.
FOLDER_NAMED = frozenset({"expo", "runner", "docx"})


class PacketUploadForm(forms.Form):
    file = forms.FileField(
        label="Question file", help_text=f"a file import_questions reads ({', '.join(FORMATS)}); .gz too"
    )
    fmt = forms.ChoiceField(
        label="Format", choices=[("auto", "detect")] + [(f, f) for f in FORMATS], initial="auto"
    )
    set_name = forms.CharField(
        label="Set name",
        max_length=200,
        required=False,
        help_text="store the questions under this set (a file of one set only); blank: the file's own "
        "set names. An exhibition or qb-tournament-runner CSV or a Word (.docx) packet names no set: give one.",
    )
    skip_invalid = forms.BooleanField(
        label="Skip records with empty content instead of refusing the file", required=False
    )

    def import_questions(self) -> dict[str, Any] | None:
        """Import the valid form's file; returns ``write_questions`` counts plus ``"format"`` and
        ``"skipped_messages"``, or None after adding the file's error to the form (nothing written)."""
        upload = self.cleaned_data["file"]
        name = Path(upload.name).name or "upload"
        set_name = self.cleaned_data["set_name"].strip()
        with tempfile.TemporaryDirectory(prefix="tossup-upload-") as tmp:
            folder = Path(tmp) / (re.sub(r"[^\w ()-]", "_", set_name) or "upload")
            folder.mkdir()
            path = folder / name
            with path.open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            try:
                parsed = parse_file(
                    path, fmt=self.cleaned_data["fmt"], skip_invalid=self.cleaned_data["skip_invalid"]
                )
                if parsed.fmt in FOLDER_NAMED and not set_name:
                    raise QuestionFileError(
                        path, None, f"a {parsed.fmt} file is named by its folder: give a set name"
                    )
                if set_name:
                    parsed = rename_set(parsed, set_name)
            except QuestionFileError as exc:
                # The command's message, with the uploaded file's name for the temporary path.
                self.add_error("file", f"nothing imported: {self._local(str(exc), path)}")
                return None
        counts = write_questions([parsed])
        counts["format"] = parsed.fmt
        counts["skipped_messages"] = [self._local(m, path) for m in parsed.skipped]
        return counts

    @staticmethod
    def _local(message: str, path: Path) -> str:
        """``message`` naming the uploaded file (and files beside it) instead of their temporary paths."""
        return message.replace(str(path), path.name).replace(f"{path.parent}/", "")
