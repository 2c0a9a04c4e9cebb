"""Rubric text (guidelines, descriptions, anchors) is Markdown, read by one real parser.

`markdown-it-py <https://markdown-it-py.readthedocs.io>`_ (CommonMark with GFM tables and
strikethrough) parses it the same way when a rubric is imported, which refuses images, and
when a page draws it, which shows it as HTML built from the parser's tokens:

* an **image** token (inline ``![a](u)``, nested or escaped brackets ``![a[b]c](u)``,
  by reference ``![logo]`` … ``[logo]: u``) is drawn as the text ``![alt](url)``;
* a **raw HTML** token (``html_inline``, ``html_block``: ``<img>``, ``<svg>``, ``<style>``,
  ``<span style="background:url(…)">``, in a paragraph or a table cell) is drawn as its
  characters;
* a **link** survives only to ``http:``, ``https:`` or ``mailto:`` (after the parser has
  decoded entities and escapes: ``java&#115;cript:`` is ``javascript:``); anything else stays
  text. Links open in a new tab without a referrer;
* every text is HTML-escaped by the renderer.

So the HTML holds only the tags and attributes the renderer writes for formatting — never a
``src``, ``style`` with a URL, or script — and the browser fetches nothing. A regular
expression cannot do this: the three forms above all got past the ones used before.

Example
-------
>>> images_in("![a[b]c](//x/y.png) and ![r]\\n\\n[r]: //x/z.png")
['//x/y.png', '//x/z.png']
>>> rubric_html('**Warm** ![x](//x/y.png) <img src=//x/z.png>')
'<p><strong>Warm</strong> ![x](//x/y.png) &lt;img src=//x/z.png&gt;</p>\\n'
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["images_in", "rubric_html", "SAFE_SCHEMES"]

SAFE_SCHEMES = ("http:", "https:", "mailto:")
_SAFE_LINK = re.compile(r"(?i)(?:https?|mailto):")


def _link_allowed(url: str) -> bool:
    return bool(_SAFE_LINK.match(url.strip()))


def _image_as_text(self, tokens: list[Token], idx: int, options, env) -> str:
    tok = tokens[idx]
    alt = self.renderInlineAsText(tok.children or [], options, env)
    return html.escape(f"![{alt}]({tok.attrGet('src') or ''})")


def _html_inline_as_text(self, tokens: list[Token], idx: int, options, env) -> str:
    return html.escape(tokens[idx].content)


def _html_block_as_text(self, tokens: list[Token], idx: int, options, env) -> str:
    return f'<p class="h2h-plain">{html.escape(tokens[idx].content.rstrip())}</p>\n'


def _link_open(self, tokens: list[Token], idx: int, options, env) -> str:
    tok = tokens[idx]
    tok.attrSet("target", "_blank")
    tok.attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = _link_allowed  # images too: they are dropped below whatever the URL
    md.add_render_rule("image", _image_as_text)
    md.add_render_rule("html_inline", _html_inline_as_text)
    md.add_render_rule("html_block", _html_block_as_text)
    md.add_render_rule("link_open", _link_open)
    return md


def _tokens(tokens: list[Token]) -> Iterator[Token]:
    for tok in tokens:
        yield tok
        if tok.children:
            yield from _tokens(tok.children)


@lru_cache(maxsize=1)
def _finder() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.validateLink = lambda url: True  # find every image, whatever its address
    return md


def images_in(text: str) -> list[str]:
    """The address of every image in ``text`` as the parser reads it (any form), in order.
    An image whose address is not a web link is still an image (``![x](javascript:…)``)."""
    return [t.attrGet("src") or "" for t in _tokens(_finder().parse(text)) if t.type == "image"]


def rubric_html(text: str) -> str:
    """``text`` (rubric Markdown) as HTML with its formatting — emphasis, lists, tables,
    code, headings, web links — and no image, raw HTML or other link (see the module)."""
    return _parser().render(text or "")
