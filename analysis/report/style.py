"""The house style of every figure: one Plotly template for an ACL/ARR page.

* Sizes: an ACL page is A4 with two 7.7 cm columns (0.6 cm apart, 16 cm text width) and
  11 pt Times. Figures are drawn at their printed size, in CSS pixels at 96 per inch, so a
  column figure is 291 px wide (7.7 cm = 3.03 in) and a text-wide one 605 px (16 cm = 6.3 in);
  ``\\includegraphics[width=\\columnwidth]`` then scales the PDF by 1.0 and a 12 px label
  prints at 9 pt, the size of a caption's small print. PNGs are written at 300 dpi.
* Font: a Times face to match the paper's body text. Liberation Serif first: it has the
  metrics of Times New Roman and is a TrueType font, which Chromium embeds in the PDF as a
  real (CID TrueType) font; OpenType-CFF Times clones such as Nimbus Roman come out as
  Type 3 glyph procedures, which some publishers' checks reject. Then Times New Roman, Times,
  Nimbus Roman, TeX Gyre Termes, any serif.
* Colour: the Okabe & Ito (2008) palette, distinguishable with every common colour-vision
  deficiency, with marker shapes as a second cue; sequential heatmaps in blues.
* No title inside the image (the caption lives in LaTeX and HTML); every axis has a title
  with its unit; dimensions carry the rubric's labels in the rubric's order.

Reference: Okabe, M., & Ito, K. (2008). Color Universal Design (CUD): How to make figures and
presentations that are friendly to colorblind people. https://jfly.uni-koeln.de/color/
"""

from __future__ import annotations

from typing import Literal

import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["TEMPLATE", "OKABE_ITO", "SYMBOLS", "SERIF", "COLUMN_PX", "TEXT_PX", "FONT_PX",
           "PNG_SCALE", "Width", "width_px", "use_template"]

Width = Literal["column", "text"]
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000",
             "#F0E442")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "cross", "x",
           "star")
SERIF = ("Liberation Serif, Times New Roman, Times, Nimbus Roman, TeX Gyre Termes, "
         "serif")
PX_PER_CM = 96 / 2.54
COLUMN_PX = round(7.7 * PX_PER_CM)   # 291
TEXT_PX = round(16.0 * PX_PER_CM)    # 605
FONT_PX = 12                         # 9 pt in print
PNG_SCALE = 300 / 96                 # 300 dpi
TEMPLATE = "h2h_paper"

_axis = dict(showline=True, linecolor="#000000", linewidth=0.8, mirror=False, ticks="outside",
             ticklen=3, tickwidth=0.8, tickcolor="#000000", showgrid=True,
             gridcolor="#e6e6e6", gridwidth=0.6, zeroline=False, automargin=True,
             title=dict(font=dict(size=FONT_PX), standoff=4))


def width_px(w: Width) -> int:
    return COLUMN_PX if w == "column" else TEXT_PX


def use_template() -> str:
    """Register the template (once) and return its name."""
    if TEMPLATE not in pio.templates:
        pio.templates[TEMPLATE] = go.layout.Template(layout=go.Layout(
            font=dict(family=SERIF, size=FONT_PX, color="#000000"),
            paper_bgcolor="#ffffff", plot_bgcolor="#ffffff", colorway=list(OKABE_ITO),
            xaxis=_axis, yaxis=_axis, margin=dict(l=4, r=8, t=6, b=4),
            legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom",
                        font=dict(size=FONT_PX - 1), bgcolor="rgba(0,0,0,0)",
                        itemwidth=30, tracegroupgap=2),
            coloraxis=dict(colorscale="Blues"),
            hoverlabel=dict(font=dict(family=SERIF)),
        ))
    return TEMPLATE
