"""Two-phase System One locator.

Phase 1 (file discovery) judges files from metadata alone — path, size, line count, never a
body — with one Noul question per file, many per request, and hands off the files above
`file_threshold` (at most `max_files`). Phase 2 (reading) reads each handed-off file
progressively: the head window first, then, round by round, the unread window whose outline
System One rates highest, as long as that rating clears `action_threshold`. Every window read is
scored with Noul in chunks of `evidence_lines` (the content is sent once, split), so evidence is
as narrow as a chunk rather than a whole window; chunks above `observation_threshold` become
evidence, adjacent ones merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from locator.base import LocatorContext, LocatorOutput
from locator.outline import definitions
from locator.repository import FileInfo, RepositoryView
from locator.result import Confidence, Evidence, ResultFile, Role
from locator.system_one.wire import NoulAnswer, Question
from locator.task import Task
from locator.windows import LineRange, tiles

DISCOVERY_INSTRUCTIONS = (
    "Judge from the path and size alone: will this file need to be read or edited to resolve the task?"
)
ACTION_INSTRUCTIONS = "Judge from the definitions it holds: should this unread line range be read next?"
OBSERVATION_INSTRUCTIONS = "Does this excerpt contain the code the task is about?"
_NOUL = "noul: probability that the statement is true"


class Termination(StrEnum):
    BUDGET_EXHAUSTED = "budget_exhausted"
    NO_ACTION_ABOVE_THRESHOLD = "no_action_above_threshold"
    ACTION_SPACE_EXHAUSTED = "action_space_exhausted"


@dataclass
class _Observation:
    span: LineRange
    score: float
    content: str


@dataclass
class _FileReader:
    info: FileInfo
    discovery_score: float
    windows: list[LineRange]
    signatures: dict[int, str]
    unread: list[int] = field(default_factory=list)
    observations: list[_Observation] = field(default_factory=list)
    termination: Termination | None = None

    def outline_of(self, window: LineRange) -> str:
        lines = [self.signatures[n].strip() for n in sorted(self.signatures) if window.start_line <= n <= window.end_line]
        return "\n".join(lines) if lines else "(no definitions start here)"


def _noul(answer: object) -> float:
    assert isinstance(answer, NoulAnswer)
    return answer.noul


def _batches(keys: list[str], size: int) -> list[list[str]]:
    return [keys[i : i + size] for i in range(0, len(keys), size)]


class TwoPhaseLocator:
    name = "two_phase"

    def __init__(
        self,
        file_threshold: float = 0.5,
        max_files: int = 8,
        discovery_batch_size: int = 64,
        window_lines: int = 80,
        evidence_lines: int = 8,
        reading_batch_size: int = 4,
        max_rounds: int = 4,
        action_threshold: float = 0.3,
        observation_threshold: float = 0.75,
        max_evidence_spans: int = 3,
        keep_unconfirmed_files: bool = False,
        file_suffixes: list[str] | None = None,
    ):
        for name, value in {"file_threshold": file_threshold, "action_threshold": action_threshold,
                            "observation_threshold": observation_threshold}.items():
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"two_phase: {name} must be in [0, 1], got {value}")
        if min(max_files, discovery_batch_size, window_lines, evidence_lines, reading_batch_size, max_rounds, max_evidence_spans) < 1:
            raise ValueError("two_phase: max_files, discovery_batch_size, window_lines, evidence_lines, reading_batch_size, max_rounds, max_evidence_spans must be >= 1")
        self.file_threshold = file_threshold
        self.max_files = max_files
        self.discovery_batch_size = discovery_batch_size
        self.window_lines = window_lines
        self.evidence_lines = evidence_lines
        self.reading_batch_size = reading_batch_size
        self.max_rounds = max_rounds
        self.action_threshold = action_threshold
        self.observation_threshold = observation_threshold
        self.max_evidence_spans = max_evidence_spans
        self.keep_unconfirmed_files = keep_unconfirmed_files
        self.file_suffixes = list(file_suffixes or [])

    def localize(self, task: Task, repo: RepositoryView, ctx: LocatorContext) -> LocatorOutput:
        handed_off = self._discover(task, ctx)
        readers = self._read(task, repo, ctx, handed_off)
        return LocatorOutput(files=self._result_files(readers), confidence_semantics=_NOUL)

    def _discover(self, task: Task, ctx: LocatorContext) -> list[tuple[FileInfo, float]]:
        with ctx.stage("file_discovery") as stage:
            files = ctx.candidate_files(self.file_suffixes)
            questions = {
                f"file{i}": Question(
                    type="noul",
                    instructions=DISCOVERY_INSTRUCTIONS,
                    criteria=f"path: {f.path}\nlines: {f.line_count}\nbytes: {f.size_bytes}",
                )
                for i, f in enumerate(files)
            }
            state = {"task": task.text, "stage": "file_discovery"}
            answers = ctx.ask_grouped(state, questions, _batches(list(questions), self.discovery_batch_size))
            scores = {k: _noul(a) for k, a in answers.items()}
            ranked = sorted(
                ((files[int(k[4:])], p) for k, p in scores.items() if p >= self.file_threshold),
                key=lambda fp: (-fp[1], fp[0].path),
            )
            kept = ranked[: self.max_files]
            ctx.decide(stage="file_discovery", handed_off=[(f.path, p) for f, p in kept])
            stage.set(files_exposed=len(files), files_above_threshold=len(ranked), files_handed_off=len(kept))
        return kept

    def _read(self, task: Task, repo: RepositoryView, ctx: LocatorContext, handed_off: list[tuple[FileInfo, float]]) -> list[_FileReader]:
        state = {"task": task.text, "stage": "reading"}
        with ctx.stage("reading") as stage:
            readers = []
            for info, score in handed_off:
                signature_lines = [d.signature_line for d in definitions(repo.unmetered_text(info.path))]
                windows = tiles(info.line_count, self.window_lines)
                readers.append(
                    _FileReader(
                        info=info,
                        discovery_score=score,
                        windows=windows,
                        # The outline the model sees is charged as lines read; locating it is a parse.
                        signatures=repo.read_lines(info.path, signature_lines),
                        unread=list(range(len(windows))),
                    )
                )
            rounds = 0
            for round_no in range(1, self.max_rounds + 1):
                active = [r for r in readers if r.termination is None]
                if not active:
                    break
                rounds = round_no
                chosen = self._choose(state, ctx, active, first=round_no == 1)
                self._observe(state, ctx, chosen)
            for reader in readers:
                if reader.termination is None:
                    reader.termination = Termination.BUDGET_EXHAUSTED
            stage.set(
                rounds=rounds,
                windows_read=sum(len(r.windows) - len(r.unread) for r in readers),
                **{f"terminated_{t.value}": sum(r.termination == t for r in readers) for t in Termination},
            )
            ctx.decide(stage="reading", termination={r.info.path: str(r.termination) for r in readers})
        return readers

    def _file_groups(self, keys_by_file: list[list[str]]) -> list[list[str]]:
        """Questions of `reading_batch_size` files per request."""
        size = self.reading_batch_size
        return [sum(keys_by_file[i : i + size], []) for i in range(0, len(keys_by_file), size)]

    def _choose(self, state: dict, ctx: LocatorContext, active: list[_FileReader], first: bool) -> list[tuple[_FileReader, int]]:
        """Rate every unread window of every active file (a request per file batch); each file
        reads its best-rated window."""
        if first:
            chosen = [(r, 0) for r in active if r.unread]
        else:
            keys_by_file = [[f"f{fi}w{wi}" for wi in r.unread] for fi, r in enumerate(active)]
            questions = {
                f"f{fi}w{wi}": Question(
                    type="noul",
                    instructions=ACTION_INSTRUCTIONS,
                    criteria=f"{r.info.path} {r.windows[wi].label()}\n{r.outline_of(r.windows[wi])}",
                )
                for fi, r in enumerate(active)
                for wi in r.unread
            }
            answers = ctx.ask_grouped(state, questions, self._file_groups(keys_by_file))
            chosen = []
            for fi, reader in enumerate(active):
                rated = sorted(((_noul(answers[f"f{fi}w{wi}"]), -wi) for wi in reader.unread), reverse=True)
                if rated and rated[0][0] >= self.action_threshold:
                    chosen.append((reader, -rated[0][1]))
                elif rated:
                    reader.termination = Termination.NO_ACTION_ABOVE_THRESHOLD
        for reader in active:
            if not reader.unread and reader.termination is None:
                reader.termination = Termination.ACTION_SPACE_EXHAUSTED
        return chosen

    def _observe(self, state: dict, ctx: LocatorContext, chosen: list[tuple[_FileReader, int]]) -> None:
        """Read every chosen window, then score all their chunks (a request per file batch)."""
        if not chosen:
            return
        chunks: list[tuple[_FileReader, LineRange, str]] = []
        keys_by_file: list[list[str]] = []
        for reader, wi in chosen:
            keys_by_file.append([])
            window = reader.windows[wi]
            reader.unread.remove(wi)
            lines = ctx.read(reader.info.path, window.start_line, window.end_line).lines
            for chunk in tiles(len(lines), self.evidence_lines):
                text = "".join(lines[chunk.start_line - 1 : chunk.end_line])
                offset = window.start_line - 1
                keys_by_file[-1].append(f"obs{len(chunks)}")
                chunks.append((reader, LineRange(chunk.start_line + offset, chunk.end_line + offset), text))
        questions = {
            f"obs{i}": Question(
                type="noul",
                instructions=OBSERVATION_INSTRUCTIONS,
                criteria=f"{reader.info.path} {span.label()}",
                content=text,
            )
            for i, (reader, span, text) in enumerate(chunks)
        }
        answers = ctx.ask_grouped(state, questions, self._file_groups(keys_by_file))
        for i, (reader, span, text) in enumerate(chunks):
            reader.observations.append(_Observation(span, _noul(answers[f"obs{i}"]), text))

    def _evidence(self, reader: _FileReader) -> list[Evidence]:
        """Chunks above the observation threshold, adjacent ones merged, the best few first."""
        kept = sorted((o for o in reader.observations if o.score >= self.observation_threshold), key=lambda o: o.span)
        merged: list[_Observation] = []
        for obs in kept:
            last = merged[-1] if merged else None
            if last is not None and obs.span.start_line == last.span.end_line + 1:
                merged[-1] = _Observation(LineRange(last.span.start_line, obs.span.end_line),
                                          max(last.score, obs.score), last.content + obs.content)
            else:
                merged.append(obs)
        return [
            Evidence(
                id=f"{reader.info.path}#{o.span.start_line}-{o.span.end_line}",
                start_line=o.span.start_line,
                end_line=o.span.end_line,
                confidence=Confidence.of(o.score, "noul", "System One noul on the excerpt (best chunk of a merged span)"),
                reason=OBSERVATION_INSTRUCTIONS,
                content=o.content,
            )
            for o in sorted(merged, key=lambda o: (-o.score, o.span.start_line))[: self.max_evidence_spans]
        ]

    def _result_files(self, readers: list[_FileReader]) -> list[ResultFile]:
        files: list[tuple[float, ResultFile]] = []
        for reader in readers:
            evidence = self._evidence(reader)
            if not evidence and not self.keep_unconfirmed_files:
                continue
            score = evidence[0].confidence.score if evidence else reader.discovery_score
            basis = "best evidence span" if evidence else "file discovery from metadata only"
            files.append(
                (
                    score,
                    ResultFile(
                        path=reader.info.path,
                        role=Role.RELEVANT if evidence else Role.CONTEXT,
                        confidence=Confidence.of(score, "noul", basis),
                        reason=f"discovery noul {reader.discovery_score:.3f}; terminated: {reader.termination}",
                        evidence=evidence,
                    ),
                )
            )
        return [f for _, f in sorted(files, key=lambda sf: (-sf[0], sf[1].path))]
