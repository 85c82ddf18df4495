"""JavaScript: `.js`, `.jsx`, `.mjs`, `.cjs` with tree-sitter-javascript (JSX included) and its tags
(functions, arrow functions bound to names, classes, methods)."""

from __future__ import annotations

import tree_sitter_javascript

from locator.languages import ecmascript
from locator.languages.ecmascript import ECMASCRIPT_FRAME
from locator.languages.language import Grammar, Language

GRAMMAR = Grammar(tree_sitter_javascript, tree_sitter_javascript.language)

LANGUAGE = Language(
    name="javascript",
    fence="javascript",
    grammars={".js": GRAMMAR, ".jsx": GRAMMAR, ".mjs": GRAMMAR, ".cjs": GRAMMAR},
    tags_from=(tree_sitter_javascript,),
    is_test=ecmascript.is_test,
    references=ecmascript.references,
    frames=(ECMASCRIPT_FRAME,),
    module_files=("{}.js", "{}/index.js"),
    entity_rule="function level: a function, method, or arrow/function expression bound to a name; "
                "class level: a class",
)
