"""What the admin pages compute from the study (bootstraps, model fits), kept across reruns and
sessions for as long as what it is computed from stays the same.

Every visit to a page and every choice on it run the page again: the Agreement page
bootstrapped every dimension and fitted the rater model on each visit (about a second on the
demo study, many on a large one at B = 2000), and on Judge calibration, looking through the
largest disagreements one item at a time bootstrapped every configuration on every choice.
Now the inputs are read from the database on every run (cheap reads) and the result is reused
while they are the same, value for value: a rating saved, changed or deleted, a judge run, a
new rubric version or another B or seed make another key at once. There is no revision
counter to keep in step and nothing to invalidate, on one server or several.

The key is a digest of the inputs' every value (:func:`content_key`), not Streamlit's hashing
of the arguments: that hashes a sample of 10,000 rows of a frame of 50,000 rows or more, so one
changed score in a large study could have shown the old numbers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import streamlit as st
from sqlalchemy.engine import Engine

from analysis.options import AnalysisOptions
from analysis.rater_model import fit_dimensions
from analysis.results import StudyAnalysis
from annotate.services import admin, ranking
from annotate.services import calibration as cal
from annotate.services.quality import rater_model_inputs

__all__ = ["content_key", "cached", "forget", "agreement", "rater_models", "calibration", "board"]

T = TypeVar("T")


def content_key(*parts: Any) -> str:
    """A digest of ``parts``, value for value: frames and series column by column (pandas'
    hash of every cell; an object column that is not all text by the pickle of its values),
    with every label, dtype (a categorical's categories and order) and the index; arrays by
    their bytes; dataclasses, mappings and sequences by their members, in order; numbers,
    text and None by type and value; anything else by its pickle.

    Equal values give equal keys whatever objects hold them (two reads of the same ratings);
    a different value gives another key. A difference that is not one of value (two equal
    mappings built in another order, -0.0 for 0.0) may give another key: a result computed
    again, never a wrong one."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        _feed(h, part)
    return h.hexdigest()


def _feed_values(h, values: pd.Series | pd.Index) -> None:
    """One column's (or one index level's) values, without their labels."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):  # the codes, then what each code means
        h.update(b"K%d" % bool(dtype.ordered))
        _feed_values(h, pd.Index(dtype.categories))
        _feed(h, np.asarray(pd.Categorical(values).codes))
        return
    h.update(repr(dtype).encode())
    if pd.api.types.is_object_dtype(dtype) and \
            pd.api.types.infer_dtype(values, skipna=False) != "string":
        # pandas hashes mixed objects by their text (1 and "1", None and NaN alike)
        h.update(b"P" + pickle.dumps(list(values), protocol=5))
        return
    h.update(pd.util.hash_pandas_object(values, index=False).to_numpy().tobytes())


def _feed_index(h, index: pd.Index) -> None:
    _feed(h, list(index.names))
    h.update(b"I%d" % index.nlevels)
    for level in range(index.nlevels):
        _feed_values(h, index.get_level_values(level))


def _feed(h, obj: Any) -> None:
    if isinstance(obj, pd.DataFrame):
        h.update(b"F%d,%d" % obj.shape)
        _feed_index(h, obj.index)
        _feed_index(h, obj.columns)  # the labels, with their types (1 is not "1")
        for i in range(obj.shape[1]):
            _feed_values(h, obj.iloc[:, i])
    elif isinstance(obj, pd.Series):
        h.update(b"S%d" % len(obj))
        _feed(h, obj.name)
        _feed_index(h, obj.index)
        _feed_values(h, obj)
    elif isinstance(obj, pd.Index):
        _feed_index(h, obj)
    elif isinstance(obj, np.ndarray) and obj.dtype != object:
        h.update(b"A" + repr((obj.shape, obj.dtype.str)).encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        h.update(b"C" + type(obj).__qualname__.encode())
        for f in dataclasses.fields(obj):
            h.update(f.name.encode())
            _feed(h, getattr(obj, f.name))
    elif isinstance(obj, Mapping):
        h.update(b"M%d" % len(obj))
        for k, v in obj.items():
            _feed(h, k)
            _feed(h, v)
    elif isinstance(obj, (list, tuple)):
        h.update(b"L%d" % len(obj) if isinstance(obj, list) else b"T%d" % len(obj))
        for v in obj:
            _feed(h, v)
    elif obj is None or isinstance(obj, (str, int, float, bool)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    else:  # sets, numpy scalars, object arrays, …: the pickle holds every value
        h.update(b"P" + pickle.dumps(obj, protocol=5))


# Results are kept as Streamlit keeps cached data: pickled, so every run gets its own copy
# and a page that changes what it got cannot change what the next run gets. The key says
# everything (the arguments with a leading underscore are not hashed); a result is dropped an
# hour after it was computed (used or not) only to give its memory back on a server that runs
# for weeks: at worst, one computation again an hour.
@st.cache_data(max_entries=32, ttl=3600, show_spinner=False)
def _computed(key: str, _compute: Callable[[], Any]) -> Any:
    return _compute()


def cached(compute: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``compute(*args, **kwargs)``, or its result kept from an earlier run with the same
    function and the same argument values. An exception is raised each time, never kept."""
    key = content_key(f"{compute.__module__}.{compute.__qualname__}", args, kwargs)
    return _computed(key, lambda: compute(*args, **kwargs))


def forget() -> None:
    """Drop every result kept (each is computed again on next use)."""
    _computed.clear()


def agreement(engine: Engine, *, B: int, seed: int = 0,
              judges: bool = False) -> StudyAnalysis | None:
    """:func:`annotate.services.admin.live_agreement`, kept while the ratings (and judges)
    are the same."""
    inputs = admin.agreement_inputs(engine, judges=judges)
    return None if inputs is None else cached(admin.agreement_of, inputs, B=B, seed=seed)


def rater_models(engine: Engine) -> dict:
    """:func:`annotate.services.quality.rater_models`, kept while the ratings are the same."""
    return cached(fit_dimensions, *rater_model_inputs(engine))


def calibration(engine: Engine, configs: list[str], *, items: list[str] | None,
                options: AnalysisOptions) -> dict:
    """:func:`annotate.services.calibration.compare_configs`, kept while the ratings,
    judgments, chosen configurations, items and options are the same."""
    return cached(cal.compare_inputs, cal.calibration_inputs(engine), list(configs),
                  items=None if items is None else list(items), options=options)


def board(engine: Engine, judge: str, *, estimator: str, B: int, seed: int) -> dict:
    """:func:`annotate.services.ranking.board`, kept while the judge's judgments, the
    ratings and the active-labelling draws are the same."""
    return cached(ranking.board_of, ranking.board_inputs(engine, judge),
                  estimator=estimator, B=B, seed=seed)
