"""A judge configuration as a value: provider, model, template and parameters, named by a hash.

The hash covers everything that shapes the prompt or the answer: provider, model, the
template's texts, the rubric version (its anchors are in the prompt), the mode, reason-first,
structured output, temperature and max tokens. It leaves out ``samples``: asking for 3 samples
after a run with 1 keeps sample 0 and asks only for samples 1 and 2, instead of paying for
sample 0 again under a new name. It also leaves out where the model is served (base URL) and
which structured-output form the server took (the prompt is the same in every form). For a GGUF
model run in-process (``--provider local``) it covers the file's SHA-256, not its path: a moved
file is the same judge, a changed file is not. The rubric language (``--rubric-language``) is in
the hash when it is not the rubric's own language: a configuration that renders the rubric as
it is written keeps the hash it had before languages existed. Human-scored exemplars in the
prompt (``h2h calibrate auto``, :mod:`judge.exemplars`) are in the hash when there are any.

Example
-------
>>> from judge.prompts import load_judge_template
>>> a = JudgeSpec("anthropic", "claude-sonnet-4-5", load_judge_template(None), "v1")
>>> b = JudgeSpec("anthropic", "claude-sonnet-4-5", load_judge_template(None), "v1", samples=3)
>>> a.hash == b.hash, len(a.hash)
(True, 16)
>>> a.hash == JudgeSpec("anthropic", "claude-sonnet-4-5", load_judge_template(None), "v1",
...                     reason_first=True).hash
False
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from data.errors import H2HError
from data.models import PAIRWISE_MODES, JudgeConfigRow
from data.rubric import RUBRIC_LANGUAGES, Rubric

from .exemplars import ExemplarSet
from .prompts import JudgeTemplate, text_hash
from .providers.base import PROVIDERS

__all__ = ["IMPORTED", "Mode", "MODES", "RUBRIC_LANGUAGE_CHOICES", "JudgeSpec", "slug",
           "spec_from_row",
           "rubric_language_setting"]

IMPORTED = "imported"
"""The provider of a configuration imported from a file (`h2h judge import`): never run here."""
Mode = Literal["per-dimension", "all", "pairwise", "pairwise-all"]
MODES: tuple[str, ...] = ("per-dimension", "all")
RUBRIC_LANGUAGE_CHOICES: tuple[str, ...] = RUBRIC_LANGUAGES + ("item",)
"""``--rubric-language``: a language the rubric's texts are rendered in, or ``item`` for each
item's own language (:func:`data.language.item_language`)."""


def rubric_language_setting(given: str | None, rubric: Rubric) -> str | None:
    """The stored setting for ``--rubric-language``: None for the rubric's own language (the
    default, so today's configurations keep their hash), else the language or ``item``."""
    if given is None:
        return None
    if given not in RUBRIC_LANGUAGE_CHOICES:
        raise H2HError(f"--rubric-language: '{given}' is not one of "
                       f"{', '.join(RUBRIC_LANGUAGE_CHOICES)}")
    return None if given == rubric.language else given


def slug(text: str) -> str:
    """A name safe in ids and file names: ``claude-sonnet-4-5``, ``llama3.1-8b``."""
    s = re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")
    return s or "model"


@dataclass(frozen=True)
class JudgeSpec:
    provider: str
    model: str
    template: JudgeTemplate
    rubric_version: str
    mode: Mode = "per-dimension"
    reason_first: bool = False
    structured: bool = True
    temperature: float | None = None
    max_tokens: int = 1024
    samples: int = 1
    name: str | None = None
    model_digest: str | None = None  # --provider local: the GGUF file's SHA-256
    model_file: str | None = None    # --provider local: where it was read from
    rubric_language: str | None = None  # None: the rubric's own; a language; or "item"
    exemplars: ExemplarSet | None = None  # human-scored examples in the prompt (calibrate auto)

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise H2HError(f"--provider: '{self.provider}' is not one of {', '.join(PROVIDERS)}")
        if not self.model.strip():
            raise H2HError("--model: give the model name, e.g. claude-sonnet-4-5")
        if self.mode not in MODES + PAIRWISE_MODES:
            raise H2HError(f"--mode: '{self.mode}' is not one of {', '.join(MODES)}")
        if self.all_mode and not self.template.user_all:
            raise H2HError(f"--mode all: the template '{self.template.source}' has no user_all "
                           "text (the prompt that rates every dimension in one call)")
        if self.samples < 1:
            raise H2HError(f"--samples must be at least 1, got {self.samples}")
        if self.max_tokens < 1:
            raise H2HError(f"--max-tokens must be at least 1, got {self.max_tokens}")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise H2HError(f"--temperature must be between 0 and 2, got {self.temperature}")
        if self.name is not None and not self.name.strip():
            raise H2HError("--name must not be empty")
        if self.rubric_language is not None \
                and self.rubric_language not in RUBRIC_LANGUAGE_CHOICES:
            raise H2HError(f"--rubric-language: '{self.rubric_language}' is not one of "
                           f"{', '.join(RUBRIC_LANGUAGE_CHOICES)}")

    @property
    def all_mode(self) -> bool:
        return self.mode in ("all", "pairwise-all")

    @property
    def pairwise(self) -> bool:
        """A pairwise judge (``h2h judge pairwise``): it compares two replies."""
        return self.mode in PAIRWISE_MODES

    @property
    def hash(self) -> str:
        fields = {"provider": self.provider, "model": self.model,
                  "template": self.template.hash, "rubric": self.rubric_version,
                  "mode": self.mode, "reason_first": self.reason_first,
                  "structured": self.structured, "temperature": self.temperature,
                  "max_tokens": self.max_tokens}
        if self.model_digest:  # only local models have one: remote hashes stay as they were
            fields["model_digest"] = self.model_digest
        if self.rubric_language is not None:  # likewise: the rubric's own language is unset
            fields["rubric_language"] = self.rubric_language
        if self.exemplars is not None:  # and a configuration without exemplars
            fields["exemplars"] = self.exemplars.hash
        return text_hash(fields)

    @property
    def display_name(self) -> str:
        """The given name, else ``<model>-<first 8 characters of the hash>``."""
        return self.name.strip() if self.name else f"{slug(self.model)}-{self.hash[:8]}"

    def row(self) -> JudgeConfigRow:
        return JudgeConfigRow(hash=self.hash, name=self.display_name, provider=self.provider,
                              model=self.model, template_name=self.template.name,
                              template_hash=self.template.hash, template=self.template.as_dict(),
                              rubric_version=self.rubric_version, mode=self.mode,
                              reason_first=self.reason_first, structured=self.structured,
                              temperature=self.temperature, max_tokens=self.max_tokens,
                              samples=self.samples, model_digest=self.model_digest,
                              model_file=self.model_file, rubric_language=self.rubric_language,
                              exemplars=None if self.exemplars is None
                              else self.exemplars.as_dict())


def spec_from_row(row: JudgeConfigRow, samples: int | None = None) -> JudgeSpec:
    """The stored configuration again (to re-run or resume it by name)."""
    if row.provider == IMPORTED:
        raise H2HError(f"'{row.name}' was imported from a file (`h2h judge import`): h2htalk "
                       "knows its scores, not its prompt or model, so it cannot run it; judge "
                       "more items where it came from and import the file again")
    return JudgeSpec(provider=row.provider, model=row.model,
                     template=JudgeTemplate.from_dict(row.template),
                     rubric_version=row.rubric_version, mode=row.mode,  # type: ignore[arg-type]
                     reason_first=row.reason_first, structured=row.structured,
                     temperature=row.temperature, max_tokens=row.max_tokens,
                     samples=samples or row.samples, name=row.name,
                     model_digest=row.model_digest, model_file=row.model_file,
                     rubric_language=row.rubric_language,
                     exemplars=ExemplarSet.from_dict(row.exemplars) if row.exemplars else None)
