"""Model and user text rendered inert: every character escaped, nothing fetched or run.

The conversation is built as HTML from escaped text only (no markdown, so no images or links
can appear), with line breaks kept by CSS ``white-space: pre-wrap``. Any script, HTML tag or
markdown image in a response shows as the literal characters the model wrote.
"""

from __future__ import annotations

import html

__all__ = ["conversation_html", "response_html", "plain_html", "CHAT_CSS"]

CHAT_CSS = """
<style>
.h2h-chat{display:flex;flex-direction:column;gap:.5rem;font-size:1rem;line-height:1.5}
.h2h-turn{max-width:85%;padding:.55rem .8rem;border-radius:.8rem;white-space:pre-wrap;
  overflow-wrap:anywhere}
.h2h-user{align-self:flex-end;background:#e8f0fe;border-bottom-right-radius:.2rem}
.h2h-companion{align-self:flex-start;background:#f1f3f4;border-bottom-left-radius:.2rem}
.h2h-who{font-size:.75rem;color:#5f6368;margin-bottom:.15rem}
.h2h-plain{white-space:pre-wrap;overflow-wrap:anywhere}
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
    return CHAT_CSS + "".join(parts)


def response_html(text: str) -> str:
    """The reply to rate, set apart from the conversation."""
    return CHAT_CSS + f'<div class="h2h-response" data-testid="h2h-response">{_esc(text)}</div>'


def plain_html(text: str) -> str:
    """Any other untrusted text (persona, schedule), escaped, line breaks kept."""
    return CHAT_CSS + f'<div class="h2h-plain">{_esc(text)}</div>'
