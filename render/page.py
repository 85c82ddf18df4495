"""A context pack as a page for reading in the MLflow UI, beside the pack itself.

The pack (`r0.md`) is what an agent receives, its source lines numbered as the file numbers them
(`   561\tdef f():`). MLflow's Markdown view numbers every fenced block again from 1, so a reader saw
`1 561`. The page (`r0.html`, which the UI shows as a page) carries the pack's own numbers alone, in a
column of their own; its text is the pack's, escaped, nothing added or dropped."""

from __future__ import annotations

import html
import re

_NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")
_HEADING = re.compile(r"^(#{1,6}) (.*)$")
_STYLE = ("body{font-family:sans-serif;font-size:14px;margin:16px}"
          "table.code{border-collapse:collapse;font-family:monospace;font-size:13px;background:#f7f7f7;width:100%}"
          "td.n{color:#888;text-align:right;padding:0 12px 0 6px;user-select:none;vertical-align:top}"
          "td.c{white-space:pre-wrap;word-break:break-word}")


def pack_page(pack_text: str, title: str) -> str:
    """The pack's Markdown as HTML: headings, paragraphs and list items as text, each fenced block a
    table of its lines with the pack's line numbers (an elision marker or an unnumbered line gets none)."""
    out = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title><style>{_STYLE}</style>"]
    fenced = False
    for line in pack_text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            out.append("<table class='code'>" if fenced else "</table>")
        elif fenced:
            found = _NUMBERED.match(line)
            number, code = (found.group(1), found.group(2)) if found else ("", line)
            out.append(f"<tr><td class='n'>{number}</td><td class='c'>{html.escape(code)}</td></tr>")
        elif heading := _HEADING.match(line):
            level = len(heading.group(1))
            out.append(f"<h{level}>{html.escape(heading.group(2))}</h{level}>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    if fenced:  # a pack cut inside a block still closes its table
        out.append("</table>")
    return "\n".join(out) + "\n"
