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
