"""TypeScript: `.ts`, `.mts`, `.cts` and `.tsx` (its own grammar) from tree-sitter-typescript. Its tags
extend JavaScript's, as the grammar declares (`inherits: javascript`): the JavaScript wheel's tags run
first, then TypeScript's (interfaces, signatures, abstract classes, namespaces)."""

from __future__ import annotations

import tree_sitter_javascript
import tree_sitter_typescript

from locator.languages import ecmascript
from locator.languages.ecmascript import ECMASCRIPT_FRAME
from locator.languages.language import Grammar, Language

# Enums and type aliases define names an issue cites (`SocketMessageType`); neither wheel tags them.
EXTRA_TAGS = """
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias_declaration name: (type_identifier) @name) @definition.type
"""

TYPESCRIPT = Grammar(tree_sitter_typescript, tree_sitter_typescript.language_typescript)

LANGUAGE = Language(
    name="typescript",
    fence="typescript",
    grammars={".ts": TYPESCRIPT, ".mts": TYPESCRIPT, ".cts": TYPESCRIPT,
              ".tsx": Grammar(tree_sitter_typescript, tree_sitter_typescript.language_tsx)},
    tags_from=(tree_sitter_javascript, tree_sitter_typescript),
    extra_tags=EXTRA_TAGS,
    is_test=ecmascript.is_test,
    references=ecmascript.references,
    frames=(ECMASCRIPT_FRAME,),
    module_files=("{}.ts", "{}.tsx", "{}/index.ts"),
    entity_rule="function level: a function, method, method signature, or arrow/function expression bound "
                "to a name; class level: a class, interface, enum or type alias",
)
