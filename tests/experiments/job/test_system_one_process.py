"""Where llama.cpp's server is found: the folder `scripts/build_llama_server.sh` keeps it in, named by
the digest of its build recipe, so a binary built the old way (one with AMX kernels that died of
SIGILL here) is never the one a test or a job starts."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from experiments.job import system_one_process
from experiments.job.paths import PROJECT_ROOT
from experiments.job.system_one_process import llama_cpp_server, llama_server_binary, llama_server_build_dir


def _fake_binary(path, body: str):
    path.parent.mkdir(parents=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_build_script_and_the_server_finder_agree_on_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCLAB_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(system_one_process.LLAMA_SERVER_ENV, raising=False)
    assert llama_server_binary() is None
    built = _fake_binary(llama_server_build_dir() / "bin" / "llama-server", "exit 0")
    # the script finds a working binary where it builds one and prints it instead of compiling; its
    # download goes nowhere, so a finder that looks elsewhere fails here at once rather than compiling
    nowhere = {"https_proxy": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    out = subprocess.run(["bash", "scripts/build_llama_server.sh"], cwd=PROJECT_ROOT, capture_output=True,
                         text=True, timeout=60, env={**os.environ, "LOCLAB_CACHE_DIR": str(tmp_path), **nowhere}, check=True)
    assert out.stdout.strip().splitlines()[-1] == str(built)
    assert llama_server_binary() == built


def test_a_changed_recipe_is_a_different_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCLAB_CACHE_DIR", str(tmp_path))
    before = llama_server_build_dir()
    recipe = tmp_path / "kernels.cmake"
    recipe.write_text((PROJECT_ROOT / system_one_process.LLAMA_SERVER_RECIPE[1]).read_text() + "\n# changed\n")
    monkeypatch.setattr(system_one_process, "LLAMA_SERVER_RECIPE", (system_one_process.LLAMA_SERVER_RECIPE[0], str(recipe)))
    after = llama_server_build_dir()
    assert after.parent == before.parent and after.name.split("-")[0] == before.name.split("-")[0]
    assert after != before


def test_a_server_that_dies_of_sigill_says_so_and_how_to_rebuild(tmp_path):
    binary = _fake_binary(tmp_path / "bin" / "llama-server", "echo loading model; kill -ILL $$")
    with pytest.raises(RuntimeError, match=r"exited with -4 \(SIGILL.*build_llama_server.sh\).*loading model"):
        with llama_cpp_server(binary, tmp_path / "model.gguf", threads=1):
            pass
