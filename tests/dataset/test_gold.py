from __future__ import annotations

import pytest

from dataset.gold import GoldPatchError, derive_entities, gold_from_patch, is_test_path

PATCH = """\
diff --git a/pkg/mod.py b/pkg/mod.py
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,6 +1,6 @@
 import os
 
 def f(x):
-    return x + 1
+    return x + 2
 
 def g():
@@ -10,4 +10,6 @@ def h():
     a = 1
     b = 2
+    c = 3
+    d = 4
     return a
 
diff --git a/pkg/tests/test_mod.py b/pkg/tests/test_mod.py
--- a/pkg/tests/test_mod.py
+++ b/pkg/tests/test_mod.py
@@ -1,2 +1,3 @@
 def test_f():
     pass
+    assert True
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+def created():
+    pass
"""

OLD_SOURCE = """\
import os

def f(x):
    return x + 1

def g():
    pass

def h():
    a = 1
    b = 2
    return a

"""


def test_modified_lines_and_insertion_anchors_on_the_old_side():
    files, spans = gold_from_patch(PATCH)
    assert files == ["pkg/mod.py"]
    assert [(s.path, s.start_line, s.end_line, s.region) for s in spans] == [
        ("pkg/mod.py", 4, 4, 0),   # "-    return x + 1" is old line 4
        ("pkg/mod.py", 11, 11, 1),  # "+ c/d" inserted after old line 11 ("b = 2")
    ]


def test_insertion_at_the_top_of_a_file_anchors_at_line_one():
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n+import sys\n import os\n x = 1\n"
    _, spans = gold_from_patch(patch)
    assert [(s.start_line, s.end_line) for s in spans] == [(1, 1)]


def test_pure_deletion_block():
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,2 @@\n a = 1\n-b = 2\n-c = 3\n d = 4\n"
    _, spans = gold_from_patch(patch)
    assert [(s.start_line, s.end_line) for s in spans] == [(2, 3)]


def test_entities_are_the_innermost_enclosing_definitions():
    _, spans = gold_from_patch(PATCH)
    assert derive_entities(spans, lambda path: OLD_SOURCE) == ["pkg/mod.py:f", "pkg/mod.py:h"]


@pytest.mark.parametrize(
    "path,expected",
    [("pkg/tests/test_x.py", True), ("test_x.py", True), ("pkg/x_test.py", True), ("conftest.py", True),
     ("pkg/testing/utils.py", False), ("pkg/contest.py", False)],
)
def test_test_path_rule(path, expected):
    assert is_test_path(path) is expected


def test_unparsable_patch_is_a_clear_error():
    with pytest.raises(GoldPatchError):
        gold_from_patch("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-only one line\n")


SHIFTED = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
           "@@ -2,3 +2,3 @@ def f():\n"
           "     a = 1\n"
           "-    b = 2\n"
           "+    b = 3\n"
           "     return a + b\n")


def _gold(patch):
    from dataset.gold import hunk_anchors
    from dataset.manifest import Gold

    files, spans = gold_from_patch(patch)
    return Gold(files=files, spans=spans, anchors=hunk_anchors(patch), rule="t")


def test_a_hunk_whose_header_is_off_is_placed_where_its_text_is():
    from dataset.gold import place_gold

    gold = _gold(SHIFTED)
    assert [(s.start_line, s.end_line) for s in gold.spans] == [(3, 3)]
    at_header = "def f():\n    a = 1\n    b = 2\n    return a + b\n"
    assert place_gold(gold, {"m.py": at_header}.get, "t")[0].spans == gold.spans  # nothing to move
    four_down = "import os\nimport re\n\n\n" + at_header  # the file the hunk really is in: 4 lines further
    placed, notes = place_gold(gold, {"m.py": four_down}.get, "t")
    assert [(s.start_line, s.end_line) for s in placed.spans] == [(7, 7)] and "offset +4" in notes[0]


def test_a_hunk_found_nowhere_or_twice_fails_closed():
    from dataset.gold import GoldMismatchError, place_gold

    gold = _gold(SHIFTED)
    with pytest.raises(GoldMismatchError, match="does not match the subject anywhere"):
        place_gold(gold, {"m.py": "def f():\n    a = 1\n    b = 9\n    return a + b\n"}.get, "t")
    block = "    a = 1\n    b = 2\n    return a + b\n"
    at_five = _gold(SHIFTED.replace("@@ -2,3 +2,3 @@", "@@ -5,3 +5,3 @@"))  # the header names line 5
    with pytest.raises(GoldMismatchError, match="two places equally near"):  # found at lines 3 and 7
        place_gold(at_five, {"m.py": "x = 0\ny = 0\n" + block + "z = 0\n" + block}.get, "t")


NO_FINAL_NEWLINE = """\
--- a/lib/x.js
+++ b/lib/x.js
@@ -1,3 +1,3 @@
 const a = 1;
-const b = 2;
-}
\\ No newline at end of file
+const b = 3;
+}
\\ No newline at end of file
"""


def test_a_file_without_a_final_newline_is_placed_where_its_text_is():
    """axios__axios-5338's gold file ends without a newline: the patch text gives its last line one,
    the file does not, and the hunk is still where its header says."""
    from dataset.gold import check_gold, place_gold

    gold = _gold(NO_FINAL_NEWLINE)
    source = "const a = 1;\nconst b = 2;\n}"
    placed, notes = place_gold(gold, {"lib/x.js": source}.get, "t")
    assert placed.spans == gold.spans and notes == []
    check_gold(placed, {"lib/x.js": 3}.get, "t")
    assert [(s.start_line, s.end_line) for s in placed.spans] == [(2, 3)]
