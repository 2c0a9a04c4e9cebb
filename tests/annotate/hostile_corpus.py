"""Payloads that try to make a page fetch something or run a script, for every text that
comes from a file. Each names its URL after the payload and the field it is planted in, so
a request that reaches the sniffer says which got through.

The first three broke main (issue 36): nested and escaped brackets, and a reference-style
image, got past the regular expressions that filtered images, and a ``<span style=…>``
label was read as HTML by Plotly on Admin › Progress.
"""

from __future__ import annotations

MARK = "h2hpwn"  # in every planted address, so any request for one is seen


def corpus(p: str, where: str) -> dict[str, str]:
    """Payload name → text. ``p`` is the sniffer's base (``http://127.0.0.1:PORT``);
    ``where`` tags every planted path with the field it went into."""
    r = p.removeprefix("http:")  # protocol-relative: //127.0.0.1:PORT
    u = f"{p}/{MARK}-{where}"
    ur = f"{r}/{MARK}-{where}"
    ent = u.replace(":", "&#58;", 1)  # http&#58;//… : the parser decodes it
    ok = f"https://example.org/{MARK}-{where}"  # a kept web link (never followed)
    js = f"window.__{MARK}=1"
    return {
        "nested-brackets": f"![a[b]c]({ur}-nested.png)",
        "escaped-bracket": f"![a\\]b]({ur}-escaped.png)",
        "reference-image": f"see ![logo]\n\n[logo]: {ur}-reference.png",
        "collapsed-reference-image": f"![logo2][]\n\n[logo2]: {u}-collapsed.png",
        "reference-image-angle-title": f'![x][img3]\n\n[img3]: <{u}-angle.png> "t"',
        "image-inside-link": f"[![x]({u}-inlink.png)]({ok}-inlink)",
        "image-entity-url": f"![x]({ent}-entity.png)",
        "reference-link": f"[the manual][man]\n\n[man]: {ok}-reflink",
        "autolink": f"<{ok}-autolink> <javascript:{js}>",
        "javascript-link": f"[click](javascript:{js})",
        "javascript-entity-link": f"[click](java&#115;cript:{js}) [c](JaVaScRiPt:{js})",
        "data-links": (f"[d](data:text/html,<script>{js}</script>) "
                       f"![d](data:image/svg+xml,<svg><image href='{u}-data-svg.png'/></svg>)"),
        "html-entities": f"&lt;img src={u}-ent.png&gt; &#60;img src={u}-ent2.png&#62;",
        "img-in-table-cell": (f"| a | b |\n|---|---|\n| <img src={u}-cell.png> | "
                              f"![c]({u}-cell-md.png) |"),
        "svg-image": f'<svg><image href="{u}-svg.png"/><use href="{u}-use.svg#x"/></svg>',
        "svg-script": f'<svg onload="{js}"><script>{js}</script></svg>',
        "css-url-span": f'<span style="background-image:url({ur}-bg.png)">x</span>',
        "style-import": (f"<style>@import url({u}-import.css); "
                         f"body{{background:url({u}-style-bg.png)}}</style>"),
        "link-stylesheet": (f'<link rel="stylesheet" href="{u}-link.css">'
                            f'<link rel="prefetch" href="{u}-prefetch">'),
        "iframe": f'<iframe src="{u}-frame"></iframe>',
        "media": f'<video poster="{u}-poster.png" src="{u}-video.mp4"></video>'
                 f'<audio src="{u}-audio.mp3" autoplay></audio>',
        "object-embed": f'<object data="{u}-obj"></object><embed src="{u}-embed">',
        "picture-srcset": f'<picture><source srcset="{u}-srcset.png"><img src="{u}-pic.png">'
                          "</picture>",
        "base-href": f'<base href="{u}-base/"> ![rel]({MARK}-{where}-relative.png)',
        "meta-refresh": f'<meta http-equiv="refresh" content="0;url={u}-refresh">',
        "html-block": f"<div>\n<img src={u}-block.png onerror=\"{js}\">\n</div>",
        "img-onerror-fetch": f"<img src=x onerror=\"fetch('{u}-onerror')\">",
        "form-input": (f'<form action="{u}-form"><input type="image" src="{u}-input.png">'
                       "</form>"),
        "math": f"$\\includegraphics{{{u}-tex.png}}$ $\\href{{{u}-href}}{{x}}$",
        "streamlit-directives": ":red[x] :material/home: :streamlit: :violet-background[x]",
        "bare-url": f"{u}-bare.png www.example.org/{MARK}",
    }


def one_line(p: str, where: str) -> str:
    """For fields of one line (labels, names): the Plotly label from the report and an
    image."""
    r = p.removeprefix("http:")
    return (f'<span style="background-image:url({r}/{MARK}-{where}-bg.png)">{where}</span>'
            f" ![x]({p}/{MARK}-{where}.png)")


def text(p: str, where: str) -> str:
    """The whole corpus as one text (blocks apart, so block payloads stay blocks)."""
    return "\n\n".join(corpus(p, where).values())
