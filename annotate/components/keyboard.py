"""Keyboard scoring for the rating form: number keys score the highlighted dimension and move
on, ``x`` marks it "cannot rate", arrows move between dimensions, Enter saves.

A one-pixel iframe with the same content on every item installs one key listener on the app's
document; it reads each scale from the option labels ("3 · Adequate") and starts again at the
first dimension whenever the form's end marker names a new item. Keys typed into the comment
box are left alone. The iframe runs only this fixed script, never any model text.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["keyboard_shortcuts", "SHORTCUTS"]

SHORTCUTS = [("1–9", "score the highlighted dimension"), ("x", "cannot rate"),
             ("↑ ↓", "move between dimensions"), ("Enter", "Save and next")]

_JS = """
<script>
(function() {
  const doc = window.parent.document;
  if (doc.__h2hKeys) { doc.removeEventListener('keydown', doc.__h2hKeys, true); }
  if (doc.__h2hObs) { doc.__h2hObs.disconnect(); }
  let cur = 0, item = null;
  const groups = () => Array.from(doc.querySelectorAll('div[data-testid="stRadio"]'))
      .filter(el => el.querySelector('div[role="radiogroup"]'));
  const options = (g) => Array.from(g.querySelectorAll('div[role="radiogroup"] label'));
  const mark = () => {
    const r = doc.querySelector('[data-testid="h2h-ready"]');
    const now = r ? r.dataset.item : null;
    if (now !== item) { item = now; cur = 0; }
    groups().forEach((g, i) => {
      const want = (i === cur) ? '2px solid #1a73e8' : 'none';
      if (g.style.outline !== want) { g.style.outline = want; }
      g.style.outlineOffset = '6px'; g.style.borderRadius = '6px'; });
  };
  const choose = (pick) => {
    const gs = groups(); const g = gs[cur]; if (!g) return;
    const opt = options(g).find(pick); if (!opt) return;
    opt.click(); cur = Math.min(cur + 1, gs.length - 1); mark();
  };
  doc.__h2hKeys = function(e) {
    const t = e.target || {}; const tag = (t.tagName || '').toLowerCase();
    if (tag === 'textarea' || (tag === 'input' && t.type !== 'radio' && t.type !== 'checkbox'))
      return;
    if (e.ctrlKey || e.metaKey || e.altKey || !groups().length) return;
    if (/^[0-9]$/.test(e.key)) {
      e.preventDefault();
      choose(o => o.innerText.trim().split(' ')[0] === e.key);
    } else if (e.key === 'x' || e.key === 'X') {
      e.preventDefault(); choose(o => o.innerText.trim().startsWith('Cannot rate'));
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
  let queued = false;
  doc.__h2hObs = new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; mark(); }); }
  });
  doc.__h2hObs.observe(doc.body, {childList: true, subtree: true});
  mark();
})();
</script>
"""


def keyboard_shortcuts() -> None:
    """Install the shortcuts (the same iframe on every item, so it is never reloaded)."""
    st.iframe(_JS, height=1)
