"""The render stage's settings; every default lives in `conf/render/default.yaml`."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from locator.settings import Settings


class RenderVersion(StrEnum):
    MEASURED = "measured"  # completeness measured against the spans each section set out to send
    FLAGGED = "flagged"  # seed 002's defective rule, kept to reproduce it: a flag set at trim sites


class RenderSettings(Settings):
    version: RenderVersion
    cap_tokens: int = Field(ge=1, description="inline cap of the whole pack, exact o200k tokens")
    epilogue_floor_tokens: int = Field(ge=0, description="room the sections leave for the pointer list and note")
    max_range_lines: int = Field(ge=1, description="a wanted range longer than this is windowed to head + tail")
    window_head_lines: int = Field(ge=1)
    window_tail_lines: int = Field(ge=0)
    min_fence_lines: int = Field(ge=1, description="fewer new lines than this beside a back-reference are folded")
    min_section_lines: int = Field(ge=1, description="a section trimmed to fewer lines becomes a pointer entry")
    marker_names: int = Field(ge=0, description="elided names a gap marker spells out")
    note_names: int = Field(ge=1, description="elided names the named note offers")
    pointer_ranges: int = Field(ge=1, description="line ranges a pointer entry spells out")

    @model_validator(mode="after")
    def _consistent(self) -> "RenderSettings":
        if self.epilogue_floor_tokens >= self.cap_tokens:
            raise ValueError(f"render.cap_tokens ({self.cap_tokens}) must exceed render.epilogue_floor_tokens "
                                    f"({self.epilogue_floor_tokens}): the sections would get no room")
        if self.window_head_lines + self.window_tail_lines > self.max_range_lines:
            raise ValueError("render.window_head_lines + render.window_tail_lines must not exceed "
                                    "render.max_range_lines: a window would be longer than the range it trims")
        return self
