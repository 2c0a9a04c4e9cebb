"""Keyboard scoring for the rating and training forms, and the parts of the form that live
in the browser:
the anchor of the pointed-at or chosen level under each scale, the "Score every
dimension" warning brought into sight after a save and cleared once every dimension has a
score, and the question before unsaved choices are lost.

Keys do exactly what the legend says and nothing else: number keys score the highlighted
dimension and move the highlight on, ``x`` marks it "cannot rate", ←/→ highlight the
previous / next level of the highlighted dimension and show that level's anchor under the
scale (reading, not choosing: the focus ring moves there, the score does not), ↑/↓ and Tab
move the highlight (and the focus) between dimensions, Enter saves. The radios' own keyboard
behaviour (arrows, Home/End, Space choose the neighbouring option) is switched off while a
rating scale has the focus: a score changes only when the rater chooses it. The listener sits
on the app's window in the capture phase and stops every key it handles there, so neither the
browser nor the radio component below ever sees it.

A one-pixel iframe with the same content on every item installs the listeners once; the
script starts again at the first dimension whenever the form's end marker (``h2h-ready`` on
the rating page, ``h2h-training-ready`` on a training item) names a new item, and marks the
document (``data-h2h-keys="ready"``) once it listens. When the marker names another item of
the same page (saved, stepped or jumped to) the page scrolls back to its top and the focus
goes to its first scale (out of the Item box, where digits would change the item number).
Keys typed into the comment box or the item box are left alone.

The side-by-side form (:mod:`annotate.components.pair_form`) uses the same keys: its
preference scales are "score-pair-…" radios and its end marker is ``h2h-ready`` too.

The rating form's marker also carries what is saved for its item (``data-saved``: each
scale's option index, -1 for none; ``data-flag``; ``data-comment``). While the form differs
from it, the browser asks before the page is closed or reloaded (``beforeunload``) and the
app asks (``data-leave``, in the rater's language) before its own ways away: another page of
the menu, Resume, the Item box's − / +, and a number typed into the Item box (on Enter, or
when the focus leaves the box): "no" puts the box back at the item's number (``data-number``)
before Streamlit reads it, so nothing jumps.

The iframe runs only this fixed script, never any model text: the anchors it puts under
each scale are copies of the escaped anchor blocks the form draws, hidden, in its end marker
(one element for all of them); the anchor of the pointed-at or chosen level is a copy of that
level's nodes (its tag, when the text is not translated, included), never text parsed again.
The saved values and the question in the marker are escaped attributes, read as text.
"""

from __future__ import annotations

import streamlit as st

from annotate.services.i18n import N_

__all__ = ["keyboard_shortcuts", "SHORTCUTS", "TRAINING_SHORTCUTS"]

SHORTCUTS = [("1–9", N_("score the highlighted dimension")), ("x", N_("cannot rate")),
             ("← →", N_("read each level's anchor")),
             ("↑ ↓ Tab", N_("move between dimensions")), ("Enter", N_("Save and next"))]
TRAINING_SHORTCUTS = SHORTCUTS[:4] + [("Enter", N_("submit"))]

_JS = """
<script>
(function() {
  const win = window.parent, doc = win.document;
  const old = win.__h2hKb;
  if (old) { old.off(); }
  let cur = 0, item = null, pointed = null, choosing = false;
  let peek = null;  // [scale, level] highlighted with the arrow keys: its anchor is shown
  let fresh = false, saving = false, warned = null;
  // the rating form's end marker, or a training item's (never both on one page)
  const ready = () => doc.querySelector('[data-testid="h2h-ready"], '
      + '[data-testid="h2h-training-ready"][data-item]');
  const groups = () => Array.from(doc.querySelectorAll(
      '[class*="st-key-score-"] div[data-testid="stRadio"]'))
      .filter(el => el.querySelector('[role="radiogroup"]'));
  const options = (g) => Array.from(g.querySelectorAll('label[data-testid="stRadioOption"]'));
  const inputs = (g) => Array.from(g.querySelectorAll('input[type="radio"]'));
  const checkedIndex = (g) => inputs(g).findIndex(x => x.checked);
  const firstWord = (o) => (o.textContent || '').trim().split(/\\s+/)[0];
  const isCannot = (o, g) => options(g).indexOf(o) === options(g).length - 1;
  const groupOf = (node) => groups().findIndex(g => g.contains(node));

  const update = () => {
    const r = ready();
    const now = r ? r.dataset.item : null;
    if (now !== item) {
      // another item on the same page (saved, stepped or jumped to): it starts at its top
      // with the focus on its first scale (not in the Item box, where digits would change
      // the item number)
      fresh = item !== null && now !== null;
      item = now; cur = 0; pointed = null; peek = null; saving = false;
    }
    const gs = groups();
    if (cur >= gs.length) { cur = Math.max(gs.length - 1, 0); }
    // the anchors: block i of the end marker's hidden store, copied to the end of scale i
    // (again only when its text differs); a copy of escaped text, nothing parsed again
    const tpls = Array.from(doc.querySelectorAll('.h2h-anchor-src > .h2h-anchor-tpl'));
    let missing = 0;
    gs.forEach((g, i) => {
      const on = i === cur ? 'true' : 'false';
      if (g.dataset.h2hCurrent !== on) { g.dataset.h2hCurrent = on; }
      const chosen = checkedIndex(g);
      if (chosen < 0) { missing += 1; }
      let b = g.querySelector(':scope > .h2h-anchor');
      const tpl = tpls[i];
      if (tpl && (!b || (b.__h2hTpl !== tpl && b.__h2hHtml !== tpl.innerHTML))) {
        const copy = tpl.cloneNode(true);
        copy.className = 'h2h-anchor'; copy.__h2hHtml = tpl.innerHTML;
        if (b) { b.replaceWith(copy); } else { g.appendChild(copy); }
        b = copy;
      } else if (!tpl && b) { b.remove(); b = null; }
      if (b && tpl) { b.__h2hTpl = tpl; }  // same anchors as the last item: kept as they are
      options(g).forEach((o, k) => {  // the level read with the arrow keys, outlined
        const on = peek && peek[0] === i && peek[1] === k ? 'true' : null;
        if ((o.dataset.h2hPeek || null) !== on) {
          if (on) { o.dataset.h2hPeek = on; } else { delete o.dataset.h2hPeek; }
        }
      });
      if (b) {
        const at = (pointed && pointed[0] === i) ? pointed[1]
          : (peek && peek[0] === i) ? peek[1] : chosen;
        const src = at >= 0 ? b.querySelector('[data-level-index="' + at + '"]') : null;
        const line = b.querySelector('.h2h-anchor-now');
        if (line && line.__h2hSrc !== src) {  // copies of the level's escaped nodes
          line.__h2hSrc = src;
          if (src) { line.replaceChildren(...Array.from(src.childNodes, n => n.cloneNode(true))); }
          else { line.textContent = b.dataset.empty || ''; }
          line.classList.toggle('h2h-anchor-empty', !src);
        }
      }
      const w = doc.querySelector('.h2h-missing [data-dim-index="' + i + '"]');
      if (w) { w.hidden = chosen >= 0; }
    });
    const warn = doc.querySelector('.h2h-missing');
    if (warn) { warn.hidden = missing === 0; }
    // a save with a dimension unscored: the warning is brought into sight (it is drawn by
    // the button, below the fold of a laptop screen when the rater saved from the top)
    if (warn && !warn.hidden && (warn !== warned || saving)) {
      warned = warn; saving = false;
      warn.scrollIntoView({block: 'nearest'});
    }
    if (fresh && gs.length) {
      fresh = false;
      const a = doc.activeElement;
      if (!a || !a.closest('[data-testid="stSidebar"]')) { focusGroup(0, true); }
      for (let el = r; el; el = el.parentElement) { if (el.scrollTop) { el.scrollTop = 0; } }
      doc.querySelectorAll('.h2h-item-ctx').forEach(el => { el.scrollTop = 0; });
      win.scrollTo(0, 0);
    }
  };

  // choices on the screen that differ from what is saved (the end marker carries the saved
  // values: each scale's option index, -1 for none; the red flag; the comment)
  const unsaved = () => {
    const r = ready();
    if (!r || r.dataset.saved === undefined) return false;
    const saved = r.dataset.saved ? r.dataset.saved.split(',').map(Number) : [];
    if (groups().some((g, i) => checkedIndex(g) !== (i < saved.length ? saved[i] : -1)))
      return true;
    const flag = doc.querySelector('.st-key-h2h_rate_flag input[type="checkbox"]');
    if (flag && flag.checked !== (r.dataset.flag === '1')) return true;
    const note = doc.querySelector('.st-key-h2h_rate_comment textarea, '
        + '.st-key-h2h_pair_comment textarea');
    return !!note && note.value !== (r.dataset.comment || '');
  };
  const onLeave = (e) => {  // a reload, a closed tab, another address: the browser asks
    if (unsaved()) { e.preventDefault(); e.returnValue = ''; }
  };
  // the app's own ways away (no page unload: the browser would not ask): another page of
  // the menu, Resume, the Item box's − / +; asked in the page's language
  const AWAY = '[data-testid="stSidebarNav"] a, .st-key-h2h_resume button, '
      + '.st-key-h2h_item_no button, .st-key-h2h_queue_kind button';
  const onAway = (e) => {
    const t = e.target.closest ? e.target.closest(AWAY) : null;
    if (!t || !unsaved()) return;
    if (!win.confirm(ready().dataset.leave || '')) {
      e.preventDefault(); e.stopImmediatePropagation();
    }
  };

  // a number typed into the Item box: Streamlit jumps on Enter or when the box loses the
  // focus; asked first like − / +, and on "no" the box is set back to this item's number
  // (through the input's own value setter and an input event, as typing would) before
  // Streamlit's handlers, below this capture listener, read it
  const BOX = '.st-key-h2h_item_no input';
  let allowed = null;  // the item and number the rater said yes to (not asked twice)
  const boxMayJump = (box) => {
    const r = ready(); const here = r && r.dataset.number;
    const key = r ? r.dataset.item + ':' + box.value : null;
    if (!here || box.value === here || key === allowed || !unsaved()) return true;
    if (win.confirm(r.dataset.leave || '')) { allowed = key; return true; }
    const set = Object.getOwnPropertyDescriptor(win.HTMLInputElement.prototype, 'value').set;
    set.call(box, here);
    box.dispatchEvent(new win.Event('input', {bubbles: true}));
    return false;
  };
  const onBoxOut = (e) => {
    if (e.target.matches && e.target.matches(BOX)) boxMayJump(e.target);
  };

  const focusGroup = (i, still) => {
    const g = groups()[i]; if (!g) return;
    const ins = inputs(g); const c = checkedIndex(g);
    const target = ins[c >= 0 ? c : 0];
    if (target) { choosing = true; target.focus({preventScroll: !!still}); choosing = false; }
  };
  const move = (to) => {
    const n = groups().length; if (!n) return;
    cur = Math.max(0, Math.min(to, n - 1)); peek = null; focusGroup(cur); update();
  };
  // ← / →: highlight the previous / next level of the highlighted dimension (from the one
  // chosen, else from before the first) and show its anchor; nothing is chosen
  const read = (step) => {
    const g = groups()[cur]; if (!g) return;
    const n = options(g).length;
    const from = (peek && peek[0] === cur) ? peek[1] : checkedIndex(g);
    const to = from < 0 ? (step > 0 ? 0 : n - 1) : Math.max(0, Math.min(from + step, n - 1));
    peek = [cur, to];
    const input = inputs(g)[to];
    if (input) { choosing = true; input.focus({preventScroll: true}); choosing = false; }
    update();
  };
  const choose = (pick) => {
    const gs = groups(); const g = gs[cur]; if (!g) return;
    const opt = options(g).find(o => pick(o, g)); if (!opt) return;
    const k = options(g).indexOf(opt);
    choosing = true; opt.click(); choosing = false;
    if (cur + 1 < gs.length) { move(cur + 1); return; }
    // the last dimension: the highlight stays, on the level just chosen (the radio's own
    // checked state arrives a moment later, so not found by focusGroup)
    peek = null;
    const input = inputs(g)[k];
    if (input) { choosing = true; input.focus({preventScroll: true}); choosing = false; }
    update();
  };

  const onKey = function(e) {
    if (!ready()) return;
    const t = e.target || {}; const tag = (t.tagName || '').toLowerCase();
    if (e.key === 'Enter' && t.matches && t.matches(BOX) && !boxMayJump(t)) {
      e.preventDefault(); e.stopImmediatePropagation(); return;
    }
    if (tag === 'textarea' || (tag === 'input' && t.type !== 'radio' && t.type !== 'checkbox'))
      return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const gs = groups(); if (!gs.length) return;
    const onRadio = tag === 'input' && t.type === 'radio' && groupOf(t) >= 0;
    const free = onRadio || tag === 'body' || tag === 'html' || !tag;
    const stop = () => { e.preventDefault(); e.stopImmediatePropagation(); };
    if (/^[0-9]$/.test(e.key)) {
      stop(); choose((o, g) => !isCannot(o, g) && firstWord(o) === e.key);
    } else if (e.key === 'x' || e.key === 'X') {
      stop(); choose((o, g) => isCannot(o, g));
    } else if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && (free || onRadio)) {
      stop(); read(e.key === 'ArrowRight' ? 1 : -1);
    } else if (e.key === 'ArrowDown' && (free || tag === 'input')) {
      stop(); move(cur + 1);
    } else if (e.key === 'ArrowUp' && (free || tag === 'input')) {
      stop(); move(cur - 1);
    } else if (e.key === 'Tab' && onRadio) {
      const to = groupOf(t) + (e.shiftKey ? -1 : 1);
      if (to >= 0 && to < gs.length) { stop(); move(to); }
      // else: Tab leaves the scales (to the red flag, or back up), the usual way
    } else if (e.key === 'Enter' && (free || tag === 'input')) {
      const b = doc.querySelector('.st-key-h2h_save button, .st-key-h2h_train_save button');
      if (b) { stop(); saving = true; b.click(); }
    } else if (onRadio) {
      stop();  // arrows, Home/End, Space, Page keys: never a score by surprise
    }
  };
  const onFocus = (e) => {  // a click or Tab into a scale moves the highlight there
    if (choosing) return;
    const i = groupOf(e.target);
    if (i >= 0 && i !== cur) { cur = i; peek = null; update(); }
  };
  const onOver = (e) => {
    const o = e.target.closest ? e.target.closest('label[data-testid="stRadioOption"]') : null;
    const g = o ? groupOf(o) : -1;
    const next = g >= 0 ? [g, options(groups()[g]).indexOf(o)] : null;
    if (JSON.stringify(next) !== JSON.stringify(pointed)) { pointed = next; update(); }
  };
  const onClick = (e) => {
    if (e.target.closest && e.target.closest('.st-key-h2h_save, .st-key-h2h_train_save')) {
      saving = true;
    }
    later();
  };
  let queued = false;
  const later = () => {
    if (!queued) { queued = true; win.requestAnimationFrame(() => { queued = false; update(); }); }
  };
  win.addEventListener('keydown', onKey, true);
  doc.addEventListener('focusin', onFocus, true);
  doc.addEventListener('mouseover', onOver, true);
  const onChange = () => { peek = null; later(); };  // a level chosen: its anchor now
  doc.addEventListener('change', onChange, true);
  doc.addEventListener('click', onClick, true);
  win.addEventListener('beforeunload', onLeave);
  doc.addEventListener('click', onAway, true);
  doc.addEventListener('focusout', onBoxOut, true);
  // a new item's blank (or saved) values arrive a frame after its elements: a scale's chosen
  // option changes its data-selected, not the tree, and the anchors under it follow
  const obs = new MutationObserver(later);
  obs.observe(doc.body, {childList: true, subtree: true, attributes: true,
                         attributeFilter: ['data-selected']});
  win.__h2hKb = {off: () => {
    win.removeEventListener('keydown', onKey, true);
    doc.removeEventListener('focusin', onFocus, true);
    doc.removeEventListener('mouseover', onOver, true);
    doc.removeEventListener('change', onChange, true);
    doc.removeEventListener('click', onClick, true);
    win.removeEventListener('beforeunload', onLeave);
    doc.removeEventListener('click', onAway, true);
    doc.removeEventListener('focusout', onBoxOut, true);
    obs.disconnect();
  }};
  update();
  doc.documentElement.dataset.h2hKeys = 'ready';
})();
</script>
"""


def keyboard_shortcuts() -> None:
    """Install the shortcuts (the same iframe on every item, so it is never reloaded)."""
    st.iframe(_JS, height=1)
