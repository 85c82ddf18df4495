"""A reader whose reads are the file's definitions, not line windows: evidence bounded by where a
function or class begins and ends, one of seed 000's named next steps ("tighter evidence boundaries
than fixed ~140-line windows").

Per handed-off file (files concurrently, through the context): the file's outline is read (its
signature lines count as read) and offers one read per definition, in file order, at most
`max_offered`; one request asks a Noul per offered definition, judged on its signature — "would
reading it show the code the task is about?" The `max_reads` best at or above `read_threshold` are
read (at most `max_definition_lines` lines from the definition's first line; lines read before are
not read again). After navigation each read is scored once as evidence, so the signature judgement
cannot make evidence by itself.

A file ends `action_space_exhausted` when its outline offers nothing, `budget_exhausted` when more
definitions cleared the threshold than `max_reads`, and `no_action_above_threshold` otherwise (every
definition left unread scored below it).

It is one module and `conf/locator/definition_reader.yaml`: the Reader protocol, the shared evidence
rule and end-of-reading report (`locator.reading.reader`), the request builder (`ctx.ask_keyed`), the
metered read effect and the evidence scoring (`locator.reading.effects`) are the engine's.
"""

from __future__ import annotations

from pydantic import Field

from locator.base import LocatorContext
from locator.discovery import Candidate
from locator.outline import Definition
from locator.reading.effects import read_unread, score_reads
from locator.reading.reader import ReadsEvidence, report_reading
from locator.reading.state import FileState, Termination
from locator.system_one.wire import NoulAnswer, Question
from locator.task import Task
from locator.windows import LineRange

READ_INSTRUCTIONS = "Would reading this definition show the code the task is about?"


class DefinitionReader(ReadsEvidence):
    max_offered: int = Field(ge=1, description="definitions offered per file, in file order")
    read_threshold: float = Field(ge=0.0, le=1.0, description="Noul a definition's signature needs for it to be read")
    max_reads: int = Field(ge=1, description="definitions read per file at most, the best first")
    max_definition_lines: int = Field(ge=1, description="lines read of one definition, from its first line")

    def read(self, task: Task, ctx: LocatorContext, handed_off: list[Candidate]) -> list[FileState]:
        with ctx.stage("reading") as stage:
            states = [FileState(c, None) for c in handed_off]
            offered: dict[int, int] = {}
            ctx.run_concurrently(lambda s: offered.__setitem__(id(s), self._read_file(task, ctx, s)), states)
            requests = sum(1 for n in offered.values() if n) + score_reads(ctx, task, states)
            report_reading(stage, states, requests=requests)
            stage.count(definitions_offered=sum(offered.values()), definitions_read=sum(s.reads for s in states))
        return states

    def _read_file(self, task: Task, ctx: LocatorContext, s: FileState) -> int:
        """Offers, asks, reads; returns the definitions offered."""
        definitions = ctx.outline(s.path).definitions[: self.max_offered]
        if not definitions:
            s.termination = Termination.ACTION_SPACE_EXHAUSTED
            return 0
        s.rounds = 1
        state = {"task": task.text, "stage": "definitions", "file": {"path": s.path, "lines": s.line_count}}
        items = [(d, Question(type="noul", instructions=READ_INSTRUCTIONS, criteria=_label(s.path, d)))
                 for d in definitions]
        scored = ctx.ask_keyed([(state, items)], prefix="def", expect=NoulAnswer)
        above = sorted(((a.noul, d) for d, a in scored if a.noul >= self.read_threshold),
                       key=lambda pair: (-pair[0], pair[1].start_line))
        for _, d in above[: self.max_reads]:
            read_unread(ctx, s, LineRange(d.start_line, min(d.end_line, d.start_line + self.max_definition_lines - 1)),
                        s.rounds)
        s.termination = Termination.BUDGET_EXHAUSTED if len(above) > self.max_reads else Termination.NO_ACTION_ABOVE_THRESHOLD
        return len(definitions)


def _label(path: str, d: Definition) -> str:
    """What System One judges a definition by: where it is, what it is, its name (the signature's words)."""
    return f"{path} lines {d.start_line}-{d.end_line}: {d.kind} {d.qualname}"
