#pragma once

// A backend that measures nothing: a session on it compiles every config it evaluates for one
// arch with NVRTC (no GPU, no driver) and records what compiling tells: registers, spills,
// stack, shared memory, the theoretical occupancy. The session's own compile does that work
// (open() asks for cubins), so compile errors and configs over the arch's limits come out as
// they do on a GPU: CompileError with the NVRTC log, Pruned with the reason.
//
// A config that compiles and fits is stored as Analysed, with the message "not measured: static
// analysis for sm_90": a final outcome for this session (it counts against the budget, and a
// resume does not compile it again) that has no time. Such results rank after any timed one, by
// what compiling told (StaticRank: occupancy, registers or spills), so a session of them has a
// best, exports and heatmaps of registers, spills and occupancy.

#include "measure/backend.h"

#include <string>

namespace tilescope {

class AnalysisBackend : public Backend {
public:
    /// The message of every config that compiled and fits ("not measured: static analysis for ARCH").
    static std::string notMeasuredMessage(const std::string& arch);

    /// `arch`: a real arch with an occupancy table entry ("sm_90"); checked by open().
    explicit AnalysisBackend(std::string arch);

    /// Throws InputError when the arch is not one NVRTC and the occupancy table both know (the
    /// message lists those that are).
    BackendInfo open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space) override;
    /// Every item comes back Analysed with notMeasuredMessage() and its compile's static info;
    /// nothing runs.
    void measure(std::span<const MeasureItem> items, const MeasureControl& control, const MeasureSink& sink) override;

    const std::string& arch() const { return m_arch; }

private:
    std::string m_arch;
};

} // namespace tilescope
