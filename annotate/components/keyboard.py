"""Keyboard scoring for the rating form: number keys score the current dimension and move on,
``x`` marks it "cannot rate", arrows move between dimensions, Enter saves.

A one-pixel iframe installs one key listener on the app's document (replacing the one
from the previous item), so it works without clicking into anything first. Keys typed into
the comment box are left alone.
"""

from __future__ import annotations

import json

import streamlit as st

__all__ = ["keyboard_shortcuts", "SHORTCUTS"]

SHORTCUTS = [("1–9 (or 0)", "score the highlighted dimension and move to the next"),
             ("x", "cannot rate the highlighted dimension"),
             ("↑ / ↓", "move between dimensions"),
             ("Enter", "Save and next")]

_JS = """
<script>
(function() {
  const cfg = __CFG__;
  const doc = window.parent.document;
  if (doc.__h2hKeys) { doc.removeEventListener('keydown', doc.__h2hKeys, true); }
  if (doc.__h2hObs) { doc.__h2hObs.disconnect(); }
  let cur = 0;
  const groups = () => Array.from(doc.querySelectorAll('div[data-testid="stRadio"]'))
      .filter(el => el.querySelector('div[role="radiogroup"]'));
  const mark = () => groups().forEach((g, i) => {
      g.style.outline = (i === cur) ? '2px solid #1a73e8' : 'none';
      g.style.outlineOffset = '6px'; g.style.borderRadius = '6px'; });
  const choose = (idx) => {
      const g = groups()[cur]; if (!g) return;
      const labels = g.querySelectorAll('div[role="radiogroup"] label');
      if (idx >= 0 && idx < labels.length) { labels[idx].click(); }
      cur = Math.min(cur + 1, groups().length - 1); mark(); };
  doc.__h2hKeys = function(e) {
    const t = e.target || {}; const tag = (t.tagName || '').toLowerCase();
    if (tag === 'textarea' || (tag === 'input' && t.type !== 'radio' && t.type !== 'checkbox'))
      return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const dims = cfg.dims; if (!dims.length) return;
    if (/^[0-9]$/.test(e.key)) {
      const vals = dims[Math.min(cur, dims.length - 1)];
      const idx = vals.indexOf(parseInt(e.key, 10));
      if (idx >= 0) { e.preventDefault(); choose(idx); }
    } else if (e.key === 'x' || e.key === 'X') {
      const vals = dims[Math.min(cur, dims.length - 1)];
      e.preventDefault(); choose(vals.length);
    } else if (e.key === 'ArrowDown') {
      e.preventDefault(); cur = Math.min(cur + 1, groups().length - 1); mark();
    } else if (e.key === 'ArrowUp') {
      e.preventDefault(); cur = Math.max(cur - 1, 0); mark();
    } else if (e.key === 'Enter') {
      const b = Array.from(doc.querySelectorAll('button'))
          .find(x => x.innerText.trim().startsWith('Save and next'));
      if (b) { e.preventDefault(); b.click(); }
    }
  };
  doc.addEventListener('keydown', doc.__h2hKeys, true);
  doc.__h2hObs = new MutationObserver(() => mark());
  doc.__h2hObs.observe(doc.body, {childList: true, subtree: true});
  mark();
})();
</script>
"""


def keyboard_shortcuts(item_key: str, dims: list[list[int]]) -> None:
    """Install the shortcuts for one item; ``dims`` lists each dimension's scale values in the
    order the radios appear (the "cannot rate" option follows them)."""
    cfg = json.dumps({"item": item_key, "dims": dims})
    # st.iframe runs our own script (never model text) with access to the app's document
    st.iframe(_JS.replace("__CFG__", cfg), height=1)
