"""Text from files rendered inert: every character escaped, nothing fetched or run.

Every text that came from a file — items (ids, model, condition, conversation, reply),
rater names, rubric labels and anchors, file names, study names — is untrusted on every
page, admin pages included. Three ways to show it:

* as HTML (:func:`conversation_html`, :func:`plain_html`, …): escaped, shown by ``st.html``;
* where Streamlit reads Markdown (titles, captions, messages, widget labels, radio options,
  tooltips, ``st.table`` cells): :func:`md_text` escapes every Markdown and Streamlit
  directive character, so the text shows exactly as written;
* rubric guidelines, descriptions and anchors, which are written as Markdown on purpose:
  :func:`rubric_text_html` parses them with a real Markdown parser and builds HTML from its
  tokens, keeping the formatting and dropping images, raw HTML and links other than web
  and mail links by token type (:mod:`data.rubric_markdown`); Streamlit never reads them;
* in a plotly figure (which reads a subset of HTML in every label): escaped by
  :func:`annotate.components.charts.plotly_chart`.

A rubric shown in the rater's language (:meth:`data.rubric.Rubric.in_language`) may lack a
translation of some texts; they are shown in the rubric's own language with a small tag
naming that language (:func:`untranslated_html`, :func:`untranslated_md`): its title and a
text for screen readers say the text is not translated, and the text itself carries its
``lang``.

The page styles (:data:`CHAT_CSS`) are added once per page by the app, not with every block:
each extra style sheet would make the browser restyle the whole page.

The conversation is built as HTML from escaped text only (no markdown, so no images or links
can appear), with line breaks kept by CSS ``white-space: pre-wrap``. Any script, HTML tag or
markdown image in a response shows as the literal characters the model wrote.
"""

from __future__ import annotations

import html
import re

from annotate.services.i18n import N_

__all__ = ["conversation_html", "response_html", "plain_html", "context_html", "shortcuts_html",
           "feedback_html", "feedback_reply_html", "anchors_html", "caption_html", "md_text",
           "rubric_text_html", "levels_table_html", "md_table", "anchor_block_html", "item_html",
           "anchors_store_html", "missing_html", "ready_marker_html", "untranslated_html",
           "stored_item_html", "untranslated_md", "language_name", "pair_html",
           "pair_anchors_store_html", "pair_ready_marker_html", "LANGUAGE_NAMES", "CHAT_CSS",
           "uploader_css", "UPLOADER_TEXTS"]

LANGUAGE_NAMES = {"en": N_("English"), "zh": N_("Chinese")}
"""The tag on a text shown untranslated names the language it is in (in the app's language:
a Chinese rater reads 英文)."""
UNTRANSLATED = N_("Not translated yet: shown in {language}")

# The rating scales: the radios of the rating form ("score-<dimension>") and of the training
# form ("score-train-<dimension>"); Streamlit gives each element the class st-key-<key>. No
# wrapper container to style them by (one element fewer per item), and no :has() on every
# rule.
SCALES = '[class*="st-key-score-"]'

CHAT_CSS = """
<style>
/* captions dark enough for WCAG AA contrast (4.5:1) on white and on the sidebar's grey */
[data-testid="stCaptionContainer"]{opacity:1}
/* segmented controls (the language switch): the chosen one at AA contrast, not by colour alone */
button[data-variant="segmented_control"][data-selected="true"]{border-width:2px}
button[data-variant="segmented_control"][data-selected="true"] p{color:#8a1020;
  font-weight:700}
[data-testid="stCaptionContainer"],[data-testid="stCaptionContainer"] p{color:#4d5156}
.h2h-chat{display:flex;flex-direction:column;gap:.5rem;font-size:1rem;line-height:1.5}
.h2h-turn{max-width:85%;padding:.55rem .8rem;border-radius:.8rem;white-space:pre-wrap;
  overflow-wrap:anywhere}
.h2h-user{align-self:flex-end;background:#e8f0fe;border-bottom-right-radius:.2rem}
.h2h-companion{align-self:flex-start;background:#f1f3f4;border-bottom-left-radius:.2rem}
.h2h-who{font-size:.75rem;color:#5f6368;margin-bottom:.15rem}
.h2h-plain{white-space:pre-wrap;overflow-wrap:anywhere}
.h2h-ctx{border:1px solid #dadce0;border-radius:.5rem;padding:.35rem .7rem;margin-bottom:.4rem}
.h2h-ctx summary{cursor:pointer;font-size:.9rem}.h2h-ctx ul{margin:.3rem 0 .2rem 1rem}
.h2h-keys{font-size:.8rem;color:#5f6368}.h2h-keys kbd{border:1px solid #dadce0;
  border-radius:3px;padding:0 .3rem;background:#f8f9fa;font-family:inherit}
.h2h-fb{border-collapse:collapse;width:100%;margin:.4rem 0}.h2h-fb td,.h2h-fb th{
  border-bottom:1px solid #dadce0;padding:.35rem .5rem;text-align:left;vertical-align:top}
.h2h-note{margin:.5rem 0 .6rem 0;padding:.5rem .75rem;border-left:4px solid #1a73e8;
  background:#f1f6fe;border-radius:4px}
.h2h-fb .h2h-miss{color:#b3261e;font-weight:600}.h2h-fb .h2h-hit{color:#146c2e;font-weight:600}
.h2h-response{padding:.8rem 1rem;border:2px solid #1a73e8;border-radius:.6rem;
  white-space:pre-wrap;overflow-wrap:anywhere;font-size:1.05rem;line-height:1.55}
/* the rating scales (see SCALES): one line each, a segmented control; the current one outlined */
{SCALES}{container-type:inline-size;width:100%}
{SCALES} [data-testid="stRadio"]{width:100%}
{SCALES} [data-testid="stRadio"]{border-radius:6px;padding:2px 4px}
{SCALES} [data-testid="stRadio"][data-h2h-current="true"]{
  outline:2px solid #1a73e8;outline-offset:3px}
{SCALES} [data-testid="stWidgetLabel"] p{font-weight:600;color:#202124}
{SCALES} [role="radiogroup"]{flex-wrap:nowrap;gap:0;width:100%;align-items:stretch}
{SCALES} [role="radiogroup"]>div{flex:1 1 0;min-width:0;display:flex}
{SCALES} label[data-testid="stRadioOption"]{flex:1;margin:0;padding:.3rem .15rem;
  border:1px solid #80868b;border-left-width:0;justify-content:center;text-align:center;
  background:#fff;color:#202124;cursor:pointer;min-height:2.4rem;align-items:center}
{SCALES} [role="radiogroup"]>div:first-child label{border-left-width:1px;
  border-radius:6px 0 0 6px}
{SCALES} [role="radiogroup"]>div:last-child{flex:0 0 auto}
{SCALES} [role="radiogroup"]>div:nth-last-child(2) label{border-radius:0 6px 6px 0}
{SCALES} [role="radiogroup"]>div:last-child label{border-radius:6px;
  margin-left:.35rem;border-left-width:1px;padding:.3rem .5rem}
{SCALES} [role="radiogroup"]>div:last-child label p{white-space:nowrap}
{SCALES} label[data-testid="stRadioOption"]>div>div:not([data-testid]){display:none}
{SCALES} label[data-testid="stRadioOption"]>div{width:100%;justify-content:center}
{SCALES} label[data-testid="stRadioOption"] [data-testid="stMarkdownContainer"]{
  width:100%;text-align:center}
{SCALES} label[data-testid="stRadioOption"] p{font-size:.78rem;line-height:1.15;
  margin:0;overflow-wrap:anywhere;color:inherit}
{SCALES} label[data-testid="stRadioOption"] strong{display:block;font-size:1rem}
{SCALES} label[data-testid="stRadioOption"]:hover{background:#e8f0fe}
{SCALES} [role="radiogroup"]>div[data-selected="true"] label{background:#174ea6;
  color:#fff;border-color:#174ea6;font-weight:700;box-shadow:inset 0 -4px 0 #fbbc04}
{SCALES} [role="radiogroup"]>div[data-selected="true"] label strong::before{
  content:"✓ "}
/* the focus ring marks the highlighted level: the one chosen, or the one read with ← →
   (data-h2h-peek, below); a scale reached with nothing chosen is outlined whole instead */
{SCALES} label[data-testid="stRadioOption"]:has(input:focus-visible:checked){
  outline:3px solid #202124;outline-offset:1px;z-index:1}
@container (max-width: 380px){
  {SCALES} [role="radiogroup"]>div:not(:last-child) label p{font-size:0}
  {SCALES} [role="radiogroup"]>div:not(:last-child) label strong{font-size:1rem}
}
/* less blank space above and beside the page (the header keeps its 3.75rem) */
[data-testid="stMainBlockContainer"]{padding-top:4rem;padding-left:2rem;padding-right:2rem;
  padding-bottom:2rem}
/* the rating and training pages on a laptop screen: the item's column fits the window,
   its context and conversation scroll on their own and the reply stays in sight under
   them; the form's elements sit closer; Save stays at the window's bottom edge when the
   form is taller than the window */
.h2h-item-ctx{outline-offset:2px}
.h2h-item-reply .h2h-response{overflow-wrap:anywhere}
@media (min-width: 1024px) and (min-height: 600px){
  .h2h-item{display:flex;flex-direction:column;max-height:calc(100vh - 9.5rem)}
  /* the training page has its title and a line above the item */
  [data-testid="stHorizontalBlock"]:has(.st-key-h2h_train_save) .h2h-item{
    max-height:calc(100vh - 18.5rem)}
  .h2h-item-ctx{flex:1 1 auto;min-height:7rem;overflow-y:auto;padding-right:.4rem}
  .h2h-item-reply{flex:0 0 auto;max-height:48vh;overflow-y:auto}
  [data-testid="stForm"]:has(.st-key-h2h_save,.st-key-h2h_train_save)>
    [data-testid="stVerticalBlock"]{gap:.45rem}
  .st-key-h2h_save,.st-key-h2h_train_save{position:sticky;bottom:0;z-index:2;
    background:#fff;padding:.3rem 0 .4rem 0}
  /* brought into sight above that pinned button, not under it */
  .h2h-missing{scroll-margin-bottom:5rem}
}
/* the top row: the progress bar takes what the Item box and Resume leave */
.st-key-h2h_top>:first-child{flex:1 1 0 !important;min-width:12rem}
/* tablets: the form goes under the reply, full width, instead of a narrow column beside it */
@media (max-width: 1023px){
  [data-testid="stHorizontalBlock"]:has(.st-key-h2h_save,.st-key-h2h_train_save){
    flex-direction:column}
  [data-testid="stHorizontalBlock"]:has(.st-key-h2h_save,.st-key-h2h_train_save)>[data-testid="stColumn"]{
    width:100% !important;flex:1 1 auto !important}
  /* the top row: progress on a line of its own, the Item box (wide enough for its − / +)
     and Resume (its whole label) side by side under it */
  .st-key-h2h_top{flex-wrap:wrap;row-gap:.5rem}
  .st-key-h2h_top>:first-child{flex:1 1 100% !important;width:100% !important}
}
.h2h-anchor-src{display:none}
/* under each scale, one line: the anchor of the level pointed at, read or chosen, and "All
   anchors" beside it (its list opens on a line of its own); a chosen level's anchor of a
   scale not highlighted stays on one line (the whole of it on hover), so the form keeps its
   height and Save stays in sight */
.h2h-anchor{margin:.1rem 0 .2rem 0;font-size:.85rem;color:#3c4043;display:flex;
  flex-wrap:wrap;align-items:flex-start;column-gap:.6rem}
.h2h-anchor>.h2h-anchor-now{flex:1 1 12rem;min-width:0}
.h2h-anchor>details{flex:0 0 auto}.h2h-anchor>details[open]{flex-basis:100%}
[data-testid="stRadio"]:not([data-h2h-current="true"]):not(:hover) .h2h-anchor-now{
  white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
{SCALES} label[data-testid="stRadioOption"][data-h2h-peek="true"]{
  outline:3px solid #202124;outline-offset:1px;z-index:1}
/* (under a scale, inside the radio: its text styles are the radio's, so set ours) */
[data-testid="stRadio"] .h2h-anchor :is(p,li,ol){font-size:.85rem;line-height:1.4}
.h2h-anchor-now{margin:0 0 .1rem 0;min-height:1.2em}
.h2h-anchor-empty{color:#5f6368;font-style:italic}
.h2h-anchor details summary{cursor:pointer;color:#174ea6;font-size:.8rem}
.h2h-anchor ol{margin:.2rem 0 .2rem 1.1rem;padding:0}.h2h-anchor li{margin:.1rem 0}
.h2h-missing{border-left:4px solid #b06000;background:#fef7e0;color:#3c2a00;
  padding:.5rem .75rem;border-radius:4px;margin:.3rem 0}
.h2h-missing span[data-dim-index]:not([hidden])~span[data-dim-index]:not([hidden])::before{
  content:", "}
.h2h-cannot{list-style:none;margin-left:-1.1rem !important}
/* a rubric text shown in the rubric's own language for want of a translation */
.h2h-untranslated{display:inline-block;margin-left:.35rem;padding:0 .3rem;font-size:.72rem;
  line-height:1.3;font-weight:600;font-style:normal;color:#3c4043;background:#f1f3f4;
  border:1px solid #80868b;border-radius:3px;white-space:nowrap}
.h2h-md>:last-child{margin-bottom:0}
.h2h-levels{border-collapse:collapse;width:100%;margin:.3rem 0 1rem 0}
.h2h-levels th,.h2h-levels td{border-bottom:1px solid #dadce0;padding:.4rem .6rem;
  text-align:left;vertical-align:top}
.h2h-levels td:first-child{white-space:nowrap;font-weight:600}
.h2h-md table{border-collapse:collapse}.h2h-md th,.h2h-md td{border:1px solid #dadce0;
  padding:.2rem .4rem}
.h2h-sr{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;
  clip:rect(0,0,0,0);white-space:nowrap;border:0}
/* side by side: the two replies in two columns, one under the other below 900 px */
.h2h-pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem;margin:.6rem 0 .4rem 0}
.h2h-side h3{font-size:1rem;margin:0 0 .3rem 0;padding:0}
@media (max-width: 900px){.h2h-pair{grid-template-columns:1fr}}
</style>
""".replace("{SCALES}", SCALES)


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


# Every ASCII punctuation mark, written as a numeric character reference: Markdown shows a
# reference as the character but never reads it as syntax (CommonMark: "&#42;foo&#42;" is
# "*foo*" in plain text); Streamlit's :color[…] and $math$ readers see no syntax either.
_MD_SPECIAL = re.compile(r"[!-/:-@\[-`{-~]")
# GFM links bare URLs and e-mail addresses in the text it has already parsed, escapes or
# not; an invisible zero-width space after the scheme, "www" or "@" stops that.
_AUTOLINK = re.compile(r"(?i)(\b(?:https?|ftp|mailto|file):|\bwww(?=\.)|@)")
_ZWSP = "\u200b"


def _no_autolink(text: str) -> str:
    return _AUTOLINK.sub(lambda m: m.group() + _ZWSP, text)


def md_text(text: object) -> str:
    """``text`` for a Streamlit element that reads Markdown, shown literally: no link, image,
    emphasis, heading, math or directive can come out of it. Line breaks are kept."""
    escaped = _MD_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", _no_autolink(str(text)))
    return escaped.replace("\r\n", "\n").replace("\n", "  \n")


def md_table(table):
    """A table for ``st.table`` (which reads Markdown in every cell, header and index) with
    every text made inert by :func:`md_text`; numbers stay numbers."""
    import pandas as pd  # only where a table is drawn

    df = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table)

    def inert(v):
        return md_text(v) if isinstance(v, str) else v

    out = df.map(inert)
    out.columns = [inert(c) for c in df.columns]
    out.index = pd.Index([inert(i) for i in df.index], name=inert(df.index.name))
    return out


def caption_html(text: str) -> str:
    """A caption line of untrusted text, escaped (for ``st.html``)."""
    return (f'<div style="font-size:.875rem;color:rgba(49,51,63,.6)" class="h2h-plain">'
            f"{_esc(text)}</div>")


def _same(text: str) -> str:
    return text


def _content(text: str) -> str:
    """Element content escaped (quotes need no escaping there: "Today's outfit")."""
    return html.escape(text, quote=False)


def conversation_html(turns: list[dict], _=_same) -> str:
    """The dialogue so far as chat bubbles (user right, companion left); ``_`` translates
    the app's own words."""
    parts = ['<div class="h2h-chat">']
    for t in turns:
        role = "user" if t.get("role") == "user" else "companion"
        who = _esc(_("User") if role == "user" else _("Companion"))
        parts.append(f'<div class="h2h-turn h2h-{role}"><div class="h2h-who">{who}</div>'
                     f'{_esc(str(t.get("text", "")))}</div>')
    parts.append("</div>")
    return "".join(parts)


def response_html(text: str) -> str:
    """The reply to rate, set apart from the conversation."""
    return f'<div class="h2h-response" data-testid="h2h-response">{_esc(text)}</div>'


def plain_html(text: str) -> str:
    """Any other untrusted text (persona, schedule), escaped, line breaks kept."""
    return f'<div class="h2h-plain">{_esc(text)}</div>'


def shortcuts_html(shortcuts: list[tuple[str, str]], title: str = "Keyboard:") -> str:
    items = " · ".join(f"<kbd>{_esc(k)}</kbd> {_esc(v)}" for k, v in shortcuts)
    return f'<div class="h2h-keys">{_esc(title)} {items}</div>'


def context_html(persona: str | None, memories: list[str], schedule: str | None,
                 outfit: str | None = None, _=_same) -> str:
    """Persona, memories, schedule and outfit as panels, open (an item carries the context
    its task is rated on: memory fidelity needs the memories, plan quality the schedule);
    the rater may fold them. One element, all text escaped; ``_`` translates the titles."""
    parts = []
    if persona:
        title = _("Companion persona")
        parts.append(f'<details class="h2h-ctx" open><summary>{_content(title)}</summary>'
                     f'<div class="h2h-plain">{_esc(persona)}</div></details>')
    if memories:
        items = "".join(f'<li class="h2h-plain">{_esc(m)}</li>' for m in memories)
        title = _("Memories from earlier sessions ({n})").format(n=len(memories))
        parts.append(f'<details class="h2h-ctx" open><summary>{_content(title)}</summary>'
                     f"<ul>{items}</ul></details>")
    if schedule:
        title = _("Schedule")
        parts.append(f'<details class="h2h-ctx" open><summary>{_content(title)}</summary>'
                     f'<div class="h2h-plain">{_esc(schedule)}</div></details>')
    if outfit:
        title = _("Today's outfit")
        parts.append(f'<details class="h2h-ctx" open><summary>{_content(title)}</summary>'
                     f'<div class="h2h-plain">{_esc(outfit)}</div></details>')
    return "".join(parts)


def item_html(view, _=_same) -> str:
    """The left column of the rating and training pages, as one element: the task, the
    context the task needs and the conversation in a region that scrolls on its own, and
    under it, always in sight, the reply to rate (all text escaped). On a laptop screen the
    column fits the window (:data:`CHAT_CSS`): the reply and the scales are seen together
    without scrolling the page. ``view`` has ``task``, ``persona``, ``memories``,
    ``schedule``, ``outfit``, ``turns`` and ``response``."""
    title = html.escape(_("Conversation"))  # outside the f-string, where pybabel finds it
    region = _esc(_("Context and conversation"))
    return ('<div class="h2h-item">'
            f'<div class="h2h-item-ctx" tabindex="0" role="region" aria-label="{region}">'
            f"<p><b>{title}</b> · {html.escape(_(view.task))}</p>"
            + context_html(view.persona, view.memories, view.schedule, view.outfit, _=_)
            + conversation_html(view.turns, _=_)
            + '</div><div class="h2h-item-reply">'
            + "<p style='margin:.6rem 0 .3rem 0'><b>"
            + html.escape(_("Companion's reply to rate")) + "</b></p>"
            + response_html(view.response) + "</div></div>")


class _Stored:
    """A stored item (``data.models.Item``) seen as :func:`item_html` reads a view."""

    def __init__(self, item):
        ctx = item.context or {}
        self.task, self.response = item.task, item.response
        self.persona, self.schedule = ctx.get("persona"), ctx.get("schedule")
        self.outfit = ctx.get("outfit")
        self.memories = list(ctx.get("memories") or [])
        self.turns = list(ctx.get("turns") or [])


def stored_item_html(item, _=_same) -> str:
    """A stored item as the rater saw it: the same block as the rating page's left column
    (task, persona, memories, schedule, outfit, conversation, the reply), all text
    escaped. For the admin pages that decide on an item (adjudication, a judge's
    disagreements)."""
    return item_html(_Stored(item), _=_)


def untranslated_html(language: str, _=_same) -> str:
    """The tag after a text shown in ``language`` for want of a translation: the language's
    name, with a title and a text for screen readers saying it is not translated."""
    name = language_name(language, _)
    why = _(UNTRANSLATED).format(language=name)
    return (f'<span class="h2h-untranslated" title="{_esc(why)}"><span aria-hidden="true">'
            f'{_content(name)}</span><span class="h2h-sr">{_content(why)}</span></span>')


def untranslated_md(language: str, _=_same) -> str:
    """The same tag where Streamlit reads Markdown (widget labels, table cells): a small
    grey badge with the language's name (its text is what screen readers read)."""
    return f" :gray-badge[{md_text(language_name(language, _))}]"


def language_name(language: str, _=_same) -> str:
    """A language's name as the tags write it, in the app's language (英文, Chinese)."""
    return _(LANGUAGE_NAMES.get(language, language))


def _shown(text: str, untranslated: bool, language: str | None, _, wrap=None) -> str:
    """Escaped text; when it is shown untranslated, in its own ``lang`` and tagged."""
    body = _esc(text) if wrap is None else wrap(_esc(text))
    if not untranslated or language is None:
        return body
    return f'<span lang="{_esc(language)}">{body}</span>{untranslated_html(language, _)}'


def _fallbacks(obj) -> frozenset[str]:
    return getattr(obj, "fallback", frozenset())


def rubric_text_html(text: str, untranslated: bool = False, language: str | None = None,
                     _=_same) -> str:
    """Rubric Markdown (guidelines, a description, an anchor) as HTML for ``st.html``: its
    formatting kept, no image, raw HTML or unsafe link (:func:`data.rubric_markdown.
    rubric_html`); when shown untranslated, in its own ``lang`` and tagged."""
    from data.rubric_markdown import rubric_html  # the parser only where rubric text is drawn

    body = f'<div class="h2h-md">{rubric_html(text)}</div>'
    if not untranslated or language is None:
        return body
    return (f'<div class="h2h-md" lang="{_esc(language)}">{rubric_html(text)}</div>'
            + untranslated_html(language, _))


def levels_table_html(d, headers: tuple[str, str], base: str | None = None, _=_same) -> str:
    """A dimension's levels as a table for ``st.html``: "value · name" (escaped) and the
    anchor (rubric Markdown, :func:`rubric_text_html`), texts the reader's language lacks
    tagged as in ``base``, the rubric's own language; ``headers`` are the two columns'
    titles (translated)."""
    rows = "".join(
        f"<tr><td>{lv.value} · {_shown(lv.label, 'label' in _fallbacks(lv), base, _)}</td>"
        f"<td>{rubric_text_html(lv.anchor, 'anchor' in _fallbacks(lv), base, _)}</td></tr>"
        for lv in d.levels)
    return (f'<table class="h2h-levels"><thead><tr><th>{_esc(headers[0])}</th>'
            f"<th>{_esc(headers[1])}</th></tr></thead><tbody>{rows}</tbody></table>")


def anchor_block_html(d, empty: str, cannot: str, all_label: str = "All anchors",
                      _=_same) -> str:
    """A scale's anchors: a line for the anchor of the level pointed at or chosen (the keyboard
    script copies it from the list, as text) and every anchor, folded. Items in the order of
    the scale's options, "cannot rate" last. All text escaped. Drawn as a template (class
    ``h2h-anchor-tpl``, in :func:`anchors_store_html`); the keyboard script puts a copy
    (class ``h2h-anchor``) under its scale."""
    base = getattr(d, "fallback_language", None)
    items = "".join(
        f'<li data-level-index="{i}"><b>{lv.value} · '
        f'{_shown(lv.label, "label" in _fallbacks(lv), base, _)}</b> — '
        f'{_shown(lv.anchor, "anchor" in _fallbacks(lv), base, _)}</li>'
        for i, lv in enumerate(d.levels))
    items += f'<li data-level-index="{len(d.levels)}" class="h2h-cannot">{_esc(cannot)}</li>'
    desc = (f'<p class="h2h-plain">{_shown(d.description, "description" in _fallbacks(d), base, _)}'
            "</p>" if d.description else "")
    return (f'<div class="h2h-anchor-tpl" data-empty="{_esc(empty)}">'
            f'<p class="h2h-anchor-now h2h-anchor-empty" aria-live="polite">{_esc(empty)}</p>'
            f"<details><summary>{_esc(all_label)}</summary>{desc}<ol>{items}</ol></details>"
            "</div>")


def anchors_store_html(dimensions, empty: str, cannot: str,
                       all_label: str = "All anchors", _=_same) -> str:
    """Every scale's anchors in one hidden block, in the order of the scales (one element for
    the whole form instead of one per dimension: a faster next item). The keyboard script
    copies block i under scale i. Texts the rater's language lacks are tagged (``_``
    translates the tag)."""
    return ('<div class="h2h-anchor-src" hidden>'
            + "".join(anchor_block_html(d, empty, cannot, all_label, _=_) for d in dimensions)
            + "</div>")


def missing_html(intro: str, dims: list[tuple[int, str]]) -> str:
    """The warning after a save with unscored dimensions: each named with its place in the
    form, so the browser can hide each as it gets a score, and the whole once none is left."""
    names = "".join(f'<span data-dim-index="{i}">{_esc(label)}</span>' for i, label in dims)
    return (f'<div class="h2h-missing" role="alert" data-testid="h2h-missing">'
            f"{_esc(intro)} {names}</div>")


def ready_marker_html(view, leave: str = "") -> str:
    """The rating form's end marker (drawn last: once it names an item, that item's form is
    on screen), carrying what is saved for the item — each scale's chosen option as its
    index (-1: none; the last option is "cannot rate"), the red flag and the comment — so
    the browser can tell choices not yet saved and ask before they are lost (``leave``: the
    question the app asks before one of its own ways away). ``view`` has ``assignment_id``,
    ``dimensions``, ``saved``, ``red_flag`` and ``comment``."""
    def index(d) -> int:
        saved = view.saved.get(d.key, "unsaved")
        if saved is None:
            return len(d.levels)
        return next((i for i, lv in enumerate(d.levels) if lv.value == saved), -1)

    saved = ",".join(str(index(d)) for d in view.dimensions)
    number = getattr(view, "number", None)  # the item's number, as the Item box shows it
    return (f'<span data-testid="h2h-ready" data-item="{_esc(str(view.assignment_id))}" '
            f'data-number="{"" if number is None else int(number)}" '
            f'data-saved="{saved}" data-flag="{1 if view.red_flag else 0}" '
            f'data-comment="{_esc(view.comment or "")}" data-leave="{_esc(leave)}"></span>')


def pair_html(view, _=_same) -> str:
    """The side-by-side page's content, as one element: the task, the shared context and
    conversation once, then the two replies side by side ("A" on the left, "B" on the right;
    one under the other on a narrow screen). All text escaped. ``view`` has the context
    fields of :func:`item_html` and ``left`` / ``right``."""
    title = html.escape(_("Conversation"))
    a, b = html.escape(_("Reply A")), html.escape(_("Reply B"))
    return (f"<p><b>{title}</b> · {html.escape(_(view.task))}</p>"
            + context_html(view.persona, view.memories, view.schedule, view.outfit, _=_)
            + conversation_html(view.turns, _=_)
            + "<p style='margin:.8rem 0 .1rem 0'><b>"
            + html.escape(_("The two replies to compare")) + "</b></p>"
            + '<div class="h2h-pair" data-testid="h2h-pair">'
            + f'<section class="h2h-side" aria-label="{a}"><h3>{a}</h3>'
            + f'<div class="h2h-response" data-testid="h2h-left">{_esc(view.left)}</div>'
            + "</section>"
            + f'<section class="h2h-side" aria-label="{b}"><h3>{b}</h3>'
            + f'<div class="h2h-response" data-testid="h2h-right">{_esc(view.right)}</div>'
            + "</section></div>")


def pair_anchors_store_html(dimensions, options: list[str], empty: str, cannot: str,
                            all_label: str = "All anchors", _=_same) -> str:
    """Every preference scale's texts in one hidden block, as :func:`anchors_store_html` for
    the rating scales: under each scale the option pointed at or chosen ("A much better on
    Empathy"), and folded, the dimension's description and its anchors for reference."""
    blocks = []
    for d in dimensions:
        base = getattr(d, "fallback_language", None)
        opts = "".join(f'<li data-level-index="{i}">{_esc(o)}</li>'
                       for i, o in enumerate(options))
        opts += f'<li data-level-index="{len(options)}" class="h2h-cannot">{_esc(cannot)}</li>'
        levels = "".join(
            f'<li><b>{lv.value} · {_shown(lv.label, "label" in _fallbacks(lv), base, _)}'
            f'</b> — {_shown(lv.anchor, "anchor" in _fallbacks(lv), base, _)}</li>'
            for lv in d.levels)
        desc = (f'<p class="h2h-plain">'
                f'{_shown(d.description, "description" in _fallbacks(d), base, _)}</p>'
                if d.description else "")
        blocks.append(f'<div class="h2h-anchor-tpl" data-empty="{_esc(empty)}">'
                      f'<p class="h2h-anchor-now h2h-anchor-empty" aria-live="polite">'
                      f"{_esc(empty)}</p><details><summary>{_esc(all_label)}</summary>"
                      f'<ol class="h2h-options" hidden>{opts}</ol>{desc}<ul>{levels}</ul>'
                      "</details></div>")
    return '<div class="h2h-anchor-src" hidden>' + "".join(blocks) + "</div>"


def pair_ready_marker_html(view, leave: str = "") -> str:
    """The side-by-side form's end marker, like :func:`ready_marker_html`: what is saved for
    the pair (each scale's chosen option index, -1 none; "cannot compare" last) and the
    comment. ``data-item`` names the queue entry ("pair-<id>")."""
    def index(d) -> int:
        saved = view.saved.get(d.key)
        if saved == "cannot":
            return view.points
        return -1 if saved is None else int(saved) - 1

    saved = ",".join(str(index(d)) for d in view.dimensions)
    return (f'<span data-testid="h2h-ready" data-item="pair-{int(view.assignment_id)}" '
            f'data-number="{int(view.number)}" data-saved="{saved}" data-flag="0" '
            f'data-comment="{_esc(view.comment or "")}" data-leave="{_esc(leave)}"></span>')


def feedback_reply_html(response: str, note: str, _=_same) -> str:
    """Above the training feedback: the reply that was rated and, once, the experts' note on
    the reply as a whole (both escaped)."""
    out = ("<p style='margin:.2rem 0 .3rem 0'><b>" + html.escape(_("The reply you rated"))
           + "</b></p>" + response_html(response))
    if note:
        out += ('<div class="h2h-note" data-testid="h2h-gold-note"><b>'
                + html.escape(_("The experts' note on this reply")) + "</b> "
                + f'<span class="h2h-plain">{_esc(note)}</span></div>')
    return out


def feedback_html(rows: list[tuple[str, int | None, float | None, str]], _=_same) -> str:
    """Training feedback: per dimension the rater's score, the expert's, and that
    dimension's own rationale (— where the gold file gives none; all escaped: rationales
    come from an uploaded file); ``_`` translates the headings."""
    def fmt(v):
        return _esc(_("cannot rate")) if v is None else f"{v:g}"

    body = []
    for label, mine, gold, why in rows:
        near = mine is not None and gold is not None and abs(mine - gold) <= 1
        cls = "h2h-hit" if near else "h2h-miss"
        body.append(f"<tr><td>{_esc(label)}</td><td class='{cls}'>{fmt(mine)}</td>"
                    f"<td>{'—' if gold is None else fmt(gold)}</td>"
                    f"<td class='h2h-plain'>{_esc(why) or '—'}</td></tr>")
    heads = "".join(f"<th>{_esc(_(h))}</th>" for h in (
        N_("Dimension"), N_("Your score"), N_("Expert score"), N_("Why")))
    return (f'<table class="h2h-fb" data-testid="h2h-feedback"><tr>{heads}</tr>'
            + "".join(body) + "</table>")


def anchors_html(dimensions, _=_same) -> str:
    """Every level's anchor of the given dimensions, escaped, as folded panels; texts the
    rater's language lacks are tagged (``_`` translates the app's words)."""
    parts = []
    for d in dimensions:
        base = getattr(d, "fallback_language", None)
        items = "".join(
            f'<li><b>{lv.value} · {_shown(lv.label, "label" in _fallbacks(lv), base, _)}</b>'
            f' — {_shown(lv.anchor, "anchor" in _fallbacks(lv), base, _)}</li>'
            for lv in d.levels)
        title = _("{dimension}: anchors").format(dimension="\0")
        head, _sep, tail = title.partition("\0")
        label = _shown(d.label, "label" in _fallbacks(d), base, _)
        parts.append(f'<details class="h2h-ctx"><summary>{_esc(head)}{label}{_esc(tail)}'
                     f"</summary><ul>{items}</ul></details>")
    return "".join(parts)


# Streamlit draws its file uploader's texts in English and has no option to change them: the
# button ("Upload"), the limits ("200MB per file • CSV") and, while a file is dragged over the
# box, "Drag and drop a file here". In another language the app hides them and shows its own
# (CSS generated text: the hidden English leaves the page and its accessibility tree; the
# button's name becomes the translation).
UPLOADER_TEXTS = {"button": N_("Choose a file"), "limits": N_("{size} per file · {types}"),
                  "dragging": N_("Drop the file here")}

_ZONE = '[data-testid="stFileUploaderDropzone"]'


def _css_string(text: str) -> str:
    """``text`` as a CSS string: quotes, backslashes and anything that could end the style
    sheet written as escapes."""
    return '"' + "".join(c if c.isalnum() or c in " ·、，：（）.-" else f"\\{ord(c):x} "
                         for c in text) + '"'


def uploader_css(key: str, button: str, limits: str, dragging: str) -> str:
    """A style sheet putting ``button``, ``limits`` and ``dragging`` in place of the English
    texts of the file uploader whose widget key is ``key`` (Streamlit gives its container
    the class ``st-key-<key>``). The limits keep Streamlit's look: 14 px in the faded text
    colour; the drag text its bold accent colour (the English is only shrunk to nothing
    there, so its colour and weight carry over)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        raise ValueError(f"key must be letters, digits, '_' or '-', not {key!r}")
    k = f".st-key-{key} {_ZONE}"
    return ("<style>"
            f'{k} button [data-testid="stMarkdownContainer"] p{{display:none}}'
            f'{k} button [data-testid="stMarkdownContainer"]::after{{'
            f"content:{_css_string(button)}}}"
            f'{k} [data-testid="stFileUploaderDropzoneInstructions"] span{{display:none}}'
            f'{k} [data-testid="stFileUploaderDropzoneInstructions"]>div::after{{'
            f"content:{_css_string(limits)};font-size:.875rem;line-height:1.6;opacity:.7}}"
            f"{k}>div:not([data-testid]):not(:has([data-testid]))>span{{font-size:0}}"
            f"{k}>div:not([data-testid]):not(:has([data-testid]))>span::after{{"
            f"content:{_css_string(dragging)};font-size:.875rem}}"
            "</style>")
