"""Model and user text rendered inert: every character escaped, nothing fetched or run.

The page styles (:data:`CHAT_CSS`) are added once per page by the app, not with every block:
each extra style sheet would make the browser restyle the whole page.

The conversation is built as HTML from escaped text only (no markdown, so no images or links
can appear), with line breaks kept by CSS ``white-space: pre-wrap``. Any script, HTML tag or
markdown image in a response shows as the literal characters the model wrote.
"""

from __future__ import annotations

import html

__all__ = ["conversation_html", "response_html", "plain_html", "context_html",
           "shortcuts_html", "feedback_html", "anchors_html", "CHAT_CSS"]

CHAT_CSS = """
<style>
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
.h2h-fb .h2h-miss{color:#b3261e;font-weight:600}.h2h-fb .h2h-hit{color:#146c2e;font-weight:600}
.h2h-response{padding:.8rem 1rem;border:2px solid #1a73e8;border-radius:.6rem;
  white-space:pre-wrap;overflow-wrap:anywhere;font-size:1.05rem;line-height:1.55}
</style>
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def conversation_html(turns: list[dict]) -> str:
    """The dialogue so far as chat bubbles (user right, companion left)."""
    parts = ['<div class="h2h-chat">']
    for t in turns:
        role = "user" if t.get("role") == "user" else "companion"
        who = "User" if role == "user" else "Companion"
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


def shortcuts_html(shortcuts: list[tuple[str, str]]) -> str:
    items = " · ".join(f"<kbd>{_esc(k)}</kbd> {_esc(v)}" for k, v in shortcuts)
    return f'<div class="h2h-keys">Keyboard: {items}</div>'


def context_html(persona: str | None, memories: list[str], schedule: str | None) -> str:
    """Persona, memories and schedule as folded panels (one element, all text escaped)."""
    parts = []
    if persona:
        parts.append('<details class="h2h-ctx"><summary>Companion persona</summary>'
                     f'<div class="h2h-plain">{_esc(persona)}</div></details>')
    if memories:
        items = "".join(f'<li class="h2h-plain">{_esc(m)}</li>' for m in memories)
        parts.append(f'<details class="h2h-ctx"><summary>Memories from earlier sessions '
                     f'({len(memories)})</summary><ul>{items}</ul></details>')
    if schedule:
        parts.append('<details class="h2h-ctx"><summary>Schedule</summary>'
                     f'<div class="h2h-plain">{_esc(schedule)}</div></details>')
    return "".join(parts)


def feedback_html(rows: list[tuple[str, int | None, float | None, str]]) -> str:
    """Training feedback: per dimension the rater's score, the expert's, and the rationale
    (all escaped: rationales come from an uploaded file)."""
    def fmt(v):
        return "cannot rate" if v is None else f"{v:g}"

    body = []
    for label, mine, gold, why in rows:
        near = mine is not None and gold is not None and abs(mine - gold) <= 1
        cls = "h2h-hit" if near else "h2h-miss"
        body.append(f"<tr><td>{_esc(label)}</td><td class='{cls}'>{fmt(mine)}</td>"
                    f"<td>{'—' if gold is None else fmt(gold)}</td>"
                    f"<td class='h2h-plain'>{_esc(why)}</td></tr>")
    return ('<table class="h2h-fb" data-testid="h2h-feedback"><tr><th>Dimension</th>'
            "<th>Your score</th><th>Expert score</th><th>Why</th></tr>" + "".join(body)
            + "</table>")


def anchors_html(dimensions) -> str:
    """Every level's anchor of the given dimensions, escaped, as folded panels."""
    parts = []
    for d in dimensions:
        items = "".join(f"<li><b>{lv.value} · {_esc(lv.label)}</b> — {_esc(lv.anchor)}</li>"
                        for lv in d.levels)
        parts.append(f'<details class="h2h-ctx"><summary>{_esc(d.label)}: anchors</summary>'
                     f"<ul>{items}</ul></details>")
    return "".join(parts)
