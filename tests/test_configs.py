"""Every option of every config group composes, every `_target_` in it instantiates, and the
README's run/score commands compose as written (lightning-hydra-template's test_configs idea)."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from experiments.job.config import compose_config
from experiments.job.paths import CONF_DIR, PROJECT_ROOT
from tests.conftest import LOCAGENT_FILE, SWEBENCH_FILE


# The option a sub-group's options are composed under (locator=two_phase unless named here), and the
# package they go to when it is not the group's own (a retriever fills one of hybrid's two slots, an
# encoder the dense stage of reranked).
_SUBGROUP_HOST = {"base": ("locator=ast_lane", ""), "retriever": ("locator=hybrid", "@locator.second"),
                  "actions": ("locator=range_runtime", ""), "view": ("locator=range_runtime", ""),
                  "prompts": ("system_one=openai_logprobs", "@system_one.backend.prompts"),
                  "weights": ("system_one=local_llm", "@system_one.backend"),
                  "encoder": ("locator=reranked", "@locator.dense.encoder")}


def _options() -> list[tuple[str, ...]]:
    """(override, ...) per option: top-level groups, and locator sub-groups under their locator."""
    combos = []
    for group in sorted(p for p in CONF_DIR.iterdir() if p.is_dir()):
        for option in sorted(group.glob("*.yaml")):
            combos.append((f"{group.name}={option.stem}",))
        for sub in sorted(p for p in group.iterdir() if p.is_dir()):
            for option in sorted(sub.glob("*.yaml")):
                host, package = _SUBGROUP_HOST.get(sub.name, ("locator=two_phase", ""))
                combos.append((host, f"{group.name}/{sub.name}{package}={option.stem}"))
    return combos


def _needs(overrides: tuple[str, ...], tmp_path: Path) -> tuple[str, ...]:
    """Values an option requires from the user (marked ??? in its YAML), and data it reads in place."""
    joined = " ".join(overrides)
    extra: tuple[str, ...] = ()
    if "locator=imported" in joined:
        outputs = tmp_path / "outputs.jsonl"
        outputs.write_text('{"task": "t", "files": []}\n')
        extra += (f"locator.path={outputs}", "locator.system=Peer")
    if "locator=locagent" in joined and not LOCAGENT_FILE.is_file():
        pytest.skip(f"LocAgent outputs not found at {LOCAGENT_FILE}")
    if "swebench" in joined and not SWEBENCH_FILE.is_file():
        pytest.skip(f"SWE-bench subset not found at {SWEBENCH_FILE}")
    if "locator=locagent" in joined:
        extra += (f"locator.path={LOCAGENT_FILE}",)
    if "sweep=ray" in overrides and importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is None:
        pytest.skip("sweep=ray needs the ray extra: LOCLAB_EXTRAS=test,ray bash scripts/setup.sh")
    if any(o.startswith("dataset=multi_swe_bench") and o.endswith("_registry") for o in overrides):  # its pins
        from tests.dataset.test_multi_swe_bench import registry_rows

        pins = compose_config(*overrides).dataset.loader.subjects
        extra += (f"dataset.loader.path={registry_rows(tmp_path, pins)}",)
    elif "dataset=multi_swe_bench" in joined:  # rows over a real local git mirror, as a user's
        from tests.dataset.test_multi_swe_bench import multi_swe_bench_rows

        rows, mirrors = multi_swe_bench_rows(tmp_path)
        extra += (f"dataset.loader.path={rows}", f"dataset.loader.git_mirrors={mirrors}")
    elif "dataset=swe_explore" in overrides:  # SWE-Explore rows over a real local git mirror
        from tests.dataset.test_swe_explore import swe_explore_rows

        rows, mirrors = swe_explore_rows(tmp_path)
        extra += (f"dataset.loader.path={rows}", f"dataset.loader.git_mirrors={mirrors}")
    elif "dataset=swebench" in overrides:  # any SWE-bench rows: the shared subset's are rows too
        extra += (f"dataset.loader.path={SWEBENCH_FILE}",)
    return extra


def _targets(node, path="") -> list[str]:
    found = []
    if isinstance(node, DictConfig):
        if "_target_" in node:
            found.append(path)
        else:
            for key in node:
                found += _targets(node[key], f"{path}.{key}" if path else str(key))
    return found


@pytest.mark.parametrize("overrides", _options(), ids=lambda o: " ".join(o))
def test_every_option_composes_and_every_target_instantiates(overrides, tmp_path, monkeypatch):
    if "tracking=server" in overrides:  # the server option reads its address from the environment, as documented
        monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5055")
    cfg = compose_config(*overrides, *_needs(overrides, tmp_path))
    assert OmegaConf.to_container(cfg, resolve=True)  # every interpolation resolves
    targets = _targets(cfg)
    assert targets, f"{overrides}: nothing to instantiate"
    for path in targets:
        assert instantiate(OmegaConf.select(cfg, path)) is not None, path


def test_every_group_option_is_covered():
    # the parametrization above is built from the folder: a new YAML is tested without editing this file
    assert len(_options()) >= len(list(CONF_DIR.rglob("*.yaml"))) - 2  # config.yaml and serve.yaml are roots


TEAM_BLOCK = "# team set-up"  # the README block tests/experiments/tracking/test_team_server.py runs (it needs the servers)


def documentation() -> list[Path]:
    """What a user reads: the README and the reference pages it links (docs/)."""
    return [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]


def readme_blocks(team: bool = False) -> list[str]:
    """The bash blocks of the README and docs/: the team set-up block alone, or every other one."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in documentation())
    return [b for b in re.findall(r"```bash\n(.*?)```", text, flags=re.S) if b.startswith(TEAM_BLOCK) == team]


def readme_commands(module_pattern: str = r"experiments\.(run|score|render)") -> list[list[str]]:
    """Each `python -m experiments.run|score|render ...` line of the README's bash blocks, as argv."""
    commands = []
    for block in readme_blocks():
        for line in block.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if len(argv) > 2 and argv[0] == "python" and argv[1] == "-m" and re.fullmatch(module_pattern, argv[2]):
                commands.append(argv[2:])
    return commands


def _expand(overrides: list[str]) -> list[list[str]]:
    """A sweep's overrides as the single-job override lists it launches (first value x each other)."""
    jobs = [[]]
    for override in overrides:
        key, _, value = override.partition("=")
        values = value.split(",") if ("," in value and not value.startswith("[")) else [value]
        jobs = [job + [f"{key}={v}"] for job in jobs for v in values]
    return jobs


@pytest.mark.parametrize("argv", readme_commands(), ids=lambda a: " ".join(a))
def test_readme_commands_compose(argv, tmp_path):
    overrides = [a for a in argv[1:] if a != "-m"]
    for job in _expand(overrides):
        compose_config(*job, *_needs(tuple(job), tmp_path))


def test_the_readme_has_run_commands():
    assert len(readme_commands()) >= 8


def test_two_phase_retrieval_is_exactly_its_documented_composition():
    named = OmegaConf.to_container(compose_config("locator=two_phase_retrieval").locator, resolve=True)
    composed = OmegaConf.to_container(compose_config(
        "locator=two_phase", "locator/discovery=retrieval", "locator/observation=chunked", "locator/expansion=fixed",
        "locator.reader.describe=outline", "locator.rank_by=discovery", "locator.keep_unconfirmed_files=true").locator,
        resolve=True)
    assert named == composed | {"name": "two_phase_retrieval"}


@pytest.mark.parametrize(("system_one", "per_task"), [("http", 8), ("openai_logprobs", 4 * 8)])
def test_a_remote_system_one_has_a_connection_for_every_request_the_job_can_have_in_flight(system_one, per_task):
    for tasks in (1, 4):
        cfg = compose_config(f"system_one={system_one}", f"concurrency.tasks={tasks}")
        assert instantiate(cfg.system_one.backend)._client._transport._pool._max_connections == tasks * per_task
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):  # the server's config has no tasks
        served = compose("serve", overrides=[f"system_one={system_one}"])
    assert served.system_one.backend.max_connections == per_task


def test_the_local_model_s_threads_are_the_yaml_s_unless_the_environment_names_them(monkeypatch):
    """2 from conf/system_one/local_llm.yaml; LOCLAB_MODEL_THREADS (scripts/test.sh: the cores over its
    workers) replaces it as a number, never as a string torch would refuse."""
    monkeypatch.delenv("LOCLAB_MODEL_THREADS", raising=False)
    assert compose_config("system_one=local_llm").system_one.backend.threads == 2
    monkeypatch.setenv("LOCLAB_MODEL_THREADS", "1")
    assert compose_config("system_one=local_llm").system_one.backend.threads == 1


@pytest.mark.parametrize("value", ["0", "two", "1.5"])
def test_a_thread_count_that_is_not_a_whole_positive_number_is_refused_naming_the_setting(value, monkeypatch):
    from hydra.errors import InstantiationException

    from tests.configs import backend
    monkeypatch.setenv("LOCLAB_MODEL_THREADS", value)
    with pytest.raises(InstantiationException, match=r"system_one\.backend\.threads must be a whole number >= 1 "
                                                      r"\(or LOCLAB_MODEL_THREADS\), got"):
        backend("local_llm")


def test_the_runs_folder_moves_everything_a_run_writes_out_of_the_checkout(tmp_path, monkeypatch):
    """With every store variable pointed elsewhere, runs/hydra and runs/reports still landed in the
    checkout (issue 49, point 13): LOCLAB_RUNS_DIR moves them all."""
    from hydra import compose, initialize_config_dir

    from experiments.job.config import register_resolvers
    from experiments.job.paths import CONF_DIR

    for name in ("LOCLAB_RESULTS_DIR", "LOCLAB_MLFLOW_DB", "LOCLAB_MLFLOW_ARTIFACTS", "MLFLOW_TRACKING_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCLAB_RUNS_DIR", str(tmp_path))
    register_resolvers()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", return_hydra_config=True)
    written = [cfg.paths.results_dir, cfg.paths.reports_dir, cfg.paths.searches_dir, cfg.tracking.db_path, cfg.tracking.artifact_dir,
               cfg.hydra.run.dir, cfg.hydra.sweep.dir]
    assert all(str(path).startswith(str(tmp_path) + "/") for path in written), written
