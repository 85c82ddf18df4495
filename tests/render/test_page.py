"""The pack's page for the MLflow UI: the pack's own line numbers alone, its text otherwise unchanged."""

from __future__ import annotations

import html
import re

from render.page import pack_page

PACK = ("### pkg/core.py · primary · lines 561-563 of 900\n"
        "```python\n"
        "   561\tdef parse(text):\n"
        "   562\t    return x < 1 and '<b>'\n"
        "⋯ 12 lines elided (parse_rest)\n"
        "   575\t    return None\n"
        "```\n"
        "\n"
        "- pkg/other.py: not shown above\n")


def test_the_page_numbers_each_line_once_with_the_packs_own_number():
    page = pack_page(PACK, "demo-001 r0")
    rows = re.findall(r"<tr><td class='n'>(\d*)</td><td class='c'>(.*?)</td></tr>", page)
    assert [n for n, _ in rows] == ["561", "562", "", "575"]  # the file's numbers; an elision gets none
    assert html.unescape(rows[1][1]) == "    return x < 1 and '<b>'"  # escaped, indentation kept
    assert "<h3>pkg/core.py · primary · lines 561-563 of 900</h3>" in page and "<p>- pkg/other.py: not shown above</p>" in page
    assert page.count("<table class='code'>") == page.count("</table>") == 1


def test_a_pack_cut_inside_a_block_still_closes_it():
    page = pack_page("```rust\n     1\tfn main() {\n", "t")
    assert page.count("<table class='code'>") == page.count("</table>") == 1
