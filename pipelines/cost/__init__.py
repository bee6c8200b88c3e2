"""What a frame costs in time and energy (issue 25; DESIGN.md §4 "Time and energy").

    from pipelines.cost import frame_cost
    cost = frame_cost(frame, preset)          # frame: pipelines.frame.FrameResult
    cost.time.ms, cost.time.fps, cost.time.limiters()
    cost.energy.mj, cost.energy.by_source(), cost.watts(60.0)

Consumes a FrameResult's per-pass counters and the preset's rates and energies
(pipelines.presets.rates, .energy); produces a `FrameCost`: the time model's `FrameTime`
(pipelines.cost.timing, a bottleneck / roofline model: each pass as long as its slowest unit)
and the energy model's `FrameEnergy` (pipelines.cost.energy: counts x pJ). Only formats call it;
nothing it returns is counted twice.
"""
from __future__ import annotations

from dataclasses import dataclass

from pipelines.cost.energy import FrameEnergy, frame_energy
from pipelines.cost.timing import FrameTime, frame_time


@dataclass(frozen=True)
class FrameCost:
    time: FrameTime
    energy: FrameEnergy

    def watts(self, fps: float | None = None) -> float:
        """Average power at `fps`, or at the frame rate the time model gives."""
        return self.energy.watts(self.time.fps if fps is None else fps)

    def as_json(self, fps: float) -> dict:
        """The figures a report row carries (JSON schema: report.schema.json `cost`)."""
        return {
            "ms": self.time.ms, "fps": self.time.fps,
            "limiters": [{"pass": p.name, "limiter": p.limiter, "ms": p.seconds * 1e3}
                         for p in self.time.passes],
            "unit_ms": {k: v * 1e3 for k, v in self.time.unit_seconds().items()},
            "mj": self.energy.mj,
            "mj_by_source": {k: v * 1e3 for k, v in self.energy.by_source().items()},
            "watts_at_model_fps": self.watts(),
            "watts_at_fps": self.watts(fps),
        }


def frame_cost(frame, preset) -> FrameCost:
    return FrameCost(frame_time(frame, preset), frame_energy(frame, preset))
