"""The judge configuration a command asks for: a stored one (``--config``) or a new one from the
options, its local model file found and checked, and its name settled against the stored
names (:func:`resolve_spec`). ``h2h judge run`` is this and a call."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy.engine import Engine

from data.errors import H2HError

from .config import MODES, JudgeSpec, rubric_language_setting, spec_from_row

__all__ = ["SpecOptions", "resolve_spec", "local_model", "stored_local_model",
           "default_temperature", "SCORING_TEMPERATURE", "SAMPLING_TEMPERATURE"]

SCORING_TEMPERATURE = 0.0
"""The sampling temperature of a new configuration without ``--temperature``: a score is a
measurement, so the same prompt should give the same answer (llama.cpp servers sample at 0.8
when told nothing; one configuration agreed with itself on 33 of 90 scores between two runs)."""
SAMPLING_TEMPERATURE = 0.7
"""... and of one created with ``--samples K`` (K > 1): self-consistency needs answers that can
differ (Wang et al. 2023, "Self-Consistency Improves Chain of Thought Reasoning", sample at
0.5-0.7)."""


def default_temperature(samples: int) -> float:
    """The temperature a new configuration fixes when none is given: 0 for scoring, 0.7 when
    it asks for several samples per item (self-consistency)."""
    return SAMPLING_TEMPERATURE if samples > 1 else SCORING_TEMPERATURE


@dataclass(frozen=True)
class SpecOptions:
    """The options that choose a judge configuration (those of ``h2h judge run``); None =
    not given."""

    config: str | None = None
    provider: str | None = None
    model: str | None = None
    name: str | None = None
    template: Path | None = None
    mode: str | None = None
    reason_first: bool = False
    temperature: float | None = None
    max_tokens: int | None = None
    samples: int | None = None
    rubric_language: str | None = None
    structured: bool = True
    model_file: Path | None = None
    #: a pairwise judge (``h2h judge pairwise``: two replies side by side)
    pairwise: bool = False

    def new_spec_options(self) -> list[str]:
        """The options given that only a new configuration takes (not ``--config``)."""
        given = [o for o, v in (("--provider", self.provider), ("--model", self.model),
                                ("--name", self.name), ("--template", self.template),
                                ("--mode", self.mode), ("--temperature", self.temperature),
                                ("--max-tokens", self.max_tokens),
                                ("--rubric-language", self.rubric_language))
                 if v is not None]
        return given + (["--reason-first"] if self.reason_first else [])


def resolve_spec(engine: Engine, opts: SpecOptions) -> tuple[JudgeSpec, str | None]:
    """The configuration to run, and a note when its name had to change (a name taken by
    another configuration gets its hash appended; see :func:`judge.store.settle_name`)."""
    from data.study import current_rubric

    from .store import find_config, settle_name

    rubric = current_rubric(engine)  # also: the study exists and is current
    if opts.config is not None:
        given = opts.new_spec_options()
        if given:
            raise H2HError(f"--config re-runs a stored configuration as it was; leave out "
                           f"{', '.join(given)} (or drop --config to make a new one)")
        spec = spec_from_row(find_config(engine, opts.config), samples=opts.samples)
        if spec.pairwise and not opts.pairwise:
            raise H2HError(f"--config: '{spec.display_name}' is a pairwise judge; run it with "
                           f"`h2h judge pairwise --config {spec.display_name}`")
        if opts.pairwise and not spec.pairwise:
            raise H2HError(f"--config: '{spec.display_name}' scores single replies; run it "
                           "with `h2h judge run --config`")
        if spec.provider == "local":
            spec = stored_local_model(spec, opts.model_file)
        elif opts.model_file is not None:
            raise H2HError(f"--model-file: '{spec.display_name}' is a {spec.provider} "
                           "configuration; a model file goes with --provider local")
    else:
        spec = _new_spec(opts, rubric)
        if opts.temperature is None:
            spec, legacy = _stored_without_temperature(engine, spec)
            if legacy is not None:
                return spec, legacy
    settled, note = settle_name(engine, spec.name, spec.hash)
    if settled != spec.name:
        spec = replace(spec, name=settled)
    if spec.samples > 1 and spec.temperature == 0:
        note = (note + "\n" if note else "") + (
            f"Note: '{spec.display_name}' samples at temperature 0, so its {spec.samples} "
            "samples repeat one answer on a deterministic server; for self-consistency start "
            "a configuration with --samples and no --temperature (0.7) or --temperature T.")
    return spec, note


def _stored_without_temperature(engine: Engine, spec: JudgeSpec
                                ) -> tuple[JudgeSpec, str | None]:
    """A configuration stored before h2htalk fixed the temperature (stored: none, so the
    provider's default) with these settings otherwise: the same command continues it, with its
    hash, its judgments and its sampling unchanged, and says so. Without one, ``spec``."""
    from data.engine import read_session
    from data.models import JudgeConfigRow

    legacy = replace(spec, temperature=None)
    with read_session(engine) as s:
        if s.get(JudgeConfigRow, spec.hash) is not None:
            return spec, None
        row = s.get(JudgeConfigRow, legacy.hash)
    if row is None or (spec.name is not None and spec.name != row.name):
        return spec, None
    return replace(legacy, name=row.name), (
        f"'{row.name}' was stored before h2htalk fixed the sampling temperature: it keeps "
        "sending none (the provider's default; 0.8 on llama.cpp servers), so its judgments "
        "stay one configuration. For repeatable scores start a new one: --temperature 0 "
        "--name NEW.")


def _new_spec(opts: SpecOptions, rubric) -> JudgeSpec:
    from .prompts import load_judge_template, load_pairwise_template

    provider, model = opts.provider, opts.model
    if provider is None or (model is None and provider != "local"):
        raise H2HError("give --provider and --model (or --config NAME to re-run a stored "
                       "configuration)")
    if opts.mode is not None and opts.mode not in MODES:
        raise H2HError(f"--mode: '{opts.mode}' is not one of {', '.join(MODES)}")
    digest = file = None
    if provider == "local":
        lm = local_model(model, opts.model_file)
        model, digest, file = lm.name, lm.digest, str(lm.path)
    elif opts.model_file is not None:
        raise H2HError("--model-file goes with --provider local (a GGUF model run in this "
                       "process)")
    if opts.pairwise:
        template = load_pairwise_template(opts.template)
        mode = "pairwise-all" if opts.mode == "all" else "pairwise"
    else:
        template, mode = load_judge_template(opts.template), opts.mode or "per-dimension"
    return JudgeSpec(provider=provider, model=model, template=template,
                     rubric_version=rubric.version, mode=mode,
                     reason_first=opts.reason_first, structured=opts.structured,
                     temperature=default_temperature(opts.samples or 1)
                     if opts.temperature is None else opts.temperature,
                     max_tokens=opts.max_tokens or 1024, samples=opts.samples or 1,
                     name=opts.name, model_digest=digest, model_file=file,
                     rubric_language=rubric_language_setting(opts.rubric_language, rubric))


def local_model(model: str | None, model_file: Path | None):
    """A local GGUF model: the bundled one by name, or a file (checked, hashed)."""
    from .providers.local_models import resolve_local_model

    return resolve_local_model(model, model_file)


def stored_local_model(spec: JudgeSpec, model_file: Path | None) -> JudgeSpec:
    """A stored local configuration with its model file found again (``--model-file`` when
    it moved) and checked: a file with another SHA-256 is another judge."""
    from .providers.local_models import BUNDLED, resolve_local_model

    where = model_file or (spec.model_file if spec.model_file and Path(spec.model_file)
                           .is_file() else None)
    if where is None and spec.model not in BUNDLED:
        raise H2HError(f"'{spec.display_name}' ran the model file {spec.model_file}, which is "
                       "not there any more; give its new place with --model-file PATH.gguf")
    lm = resolve_local_model(spec.model, where)
    if lm.digest != spec.model_digest:
        raise H2HError(f"--model-file: {lm.path} is not the model '{spec.display_name}' ran "
                       f"(SHA-256 {lm.digest[:12]}…, stored {str(spec.model_digest)[:12]}…): "
                       "another model is another judge; start a new configuration with "
                       "--provider local --model-file PATH --name NEW")
    return replace(spec, model_file=str(lm.path))
