"""Each language's references resolved against the listing (FollowFile), and its test paths."""

from __future__ import annotations

import pytest

from dataset.gold import is_test_path
from locator.languages.references import FileIndex
from locator.reading.follow import references
from locator.repository import FileInfo

LISTING = [
    # Rust: a workspace crate and another crate it uses
    "crates/agent/src/lib.rs", "crates/agent/src/server/mod.rs", "crates/agent/src/server/websocket.rs",
    "crates/agent/src/config.rs", "crates/proto/src/lib.rs", "crates/proto/src/message.rs",
    # TypeScript and JavaScript
    "web/src/platform/socket/MessageRouter.ts", "web/src/platform/socket/index.ts", "web/src/util.ts",
    "lib/router/index.js", "lib/utils.js", "lib/view.cjs",
    # Go
    "go.mod", "cmd/root.go", "internal/flags/flags.go", "internal/flags/flags_test.go",
    # Java
    "src/main/java/org/demo/Parser.java", "src/main/java/org/demo/util/Strings.java",
]
INDEX = FileIndex([FileInfo(p, 1, 1) for p in LISTING])


@pytest.mark.parametrize(("path", "line", "expected"), [
    ("crates/agent/src/lib.rs", "pub mod server;\n", [("crates/agent/src/server/mod.rs", "mod server")]),
    ("crates/agent/src/server/mod.rs", "mod websocket;\n", [("crates/agent/src/server/websocket.rs", "mod websocket")]),
    ("crates/agent/src/server/websocket.rs", "use crate::config::Config;\n",
     [("crates/agent/src/config.rs", "crate::config::Config")]),
    ("crates/agent/src/server/websocket.rs", "use super::super::config;\n",
     [("crates/agent/src/config.rs", "super::super::config")]),
    ("crates/agent/src/server/websocket.rs", "let m = proto::message::Message::new();\n",
     [("crates/proto/src/message.rs", "proto::message::Message::new")]),
    ("crates/agent/src/config.rs", "use std::collections::HashMap;\n", []),
    ("web/src/platform/socket/index.ts", "import { MessageRouter } from './MessageRouter'\n",
     [("web/src/platform/socket/MessageRouter.ts", "./MessageRouter")]),
    ("web/src/platform/socket/index.ts", "export * from '../../util.js'\n", [("web/src/util.ts", "../../util.js")]),
    ("lib/utils.js", "var Router = require('./router');\n", [("lib/router/index.js", "./router")]),
    ("lib/utils.js", "const v = await import(\"./view.cjs\")\n", [("lib/view.cjs", "./view.cjs")]),
    ("lib/utils.js", "const fs = require('fs')\n", []),
    ("cmd/root.go", '\t"github.com/spf13/cobra/internal/flags"\n', [("internal/flags/flags.go", "github.com/spf13/cobra/internal/flags")]),
    ("cmd/root.go", 'import "fmt"\n', []),
    ("src/main/java/org/demo/Parser.java", "import org.demo.util.Strings;\n",
     [("src/main/java/org/demo/util/Strings.java", "org.demo.util.Strings")]),
    ("src/main/java/org/demo/Parser.java", "import static org.demo.util.Strings.trim;\n",
     [("src/main/java/org/demo/util/Strings.java", "org.demo.util.Strings.trim")]),
])
def test_a_reference_in_each_language_resolves_to_the_file_it_names(path, line, expected):
    assert references(path, line, INDEX) == expected


@pytest.mark.parametrize(("path", "test"), [
    ("tokio/tests/io_read.rs", True), ("benches/search.rs", True), ("src/printer/tests.rs", True),
    ("crates/core/src/flags/defs.rs", False),
    ("src/__tests__/router.ts", True), ("src/router.test.ts", True), ("test/plugin/utc.test.js", True),
    ("lib/core/Axios.spec.js", True), ("src/plugin/utc/index.js", False),
    ("internal/flags/flags_test.go", True), ("cobra/testdata/x.go", True), ("command.go", False),
    ("src/test/java/org/demo/ParserTest.java", True), ("src/test/java/org/demo/Fixtures.java", True), ("src/main/java/org/demo/Parser.java", False),
    ("pkg/tests/test_core.py", True), ("conftest.py", True), ("pkg/core.py", False),
    ("tests/fixtures/data.json", True), ("CHANGELOG.md", False),
])
def test_each_languages_test_paths_are_never_gold(path, test):
    assert is_test_path(path) is test


@pytest.mark.parametrize(("path", "module"), [
    ("pkg/mod.py", "mod"), ("pkg/__init__.py", "pkg"), ("src/server/mod.rs", "server"), ("src/arg.rs", "arg"),
    ("web/socket/index.ts", "socket"), ("lib/router/index.js", "router"), ("cmd/root.go", "root"),
    ("README.md", "README")])
def test_a_files_module_name_follows_its_languages_package_index_file(path, module):
    """`module.Class` definition searches (the AST lane's owner terms) qualify by this name."""
    from locator.languages import module_name

    assert module_name(path) == module
