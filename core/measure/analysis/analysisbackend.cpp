#include "measure/analysis/analysisbackend.h"

#include "analysis/staticanalysis.h"

namespace tilescope {

std::string AnalysisBackend::notMeasuredMessage(const std::string& arch) {
    return "not measured: static analysis for " + arch;
}

AnalysisBackend::AnalysisBackend(std::string arch)
    : m_arch(std::move(arch)) {}

BackendInfo AnalysisBackend::open(const TuningProblem& problem, std::size_t, const ConfigSpace&) {
    StaticAnalyzer::checkArch(m_arch);
    BackendInfo info;
    info.kind = "analysis";
    info.description = "static analysis for " + m_arch + " (" + compilerLabel(problem) + ", nothing measured)";
    info.arch = m_arch;
    if (const ArchLimits* limits = findArch(m_arch))
        info.limits = *limits; // configs that cannot launch on the arch are pruned as on its GPUs
    info.needsCubins = true;   // the session compiles each config for `arch`: that is the analysis
    info.simulated = false;
    info.preferredBatch = 16;
    return info;
}

void AnalysisBackend::measure(std::span<const MeasureItem> items, const MeasureControl& control,
                              const MeasureSink& sink) {
    for (std::size_t i = 0; i < items.size(); ++i) {
        Measurement m;
        if (control.cancel && control.cancel->load()) {
            m.status = ResultStatus::Skipped;
            m.message = "cancelled";
        } else {
            m.status = ResultStatus::Analysed;
            m.message = notMeasuredMessage(m_arch);
            if (const CompileResult* compiled = items[i].compiled())
                m.staticInfo = compiled->info;
        }
        sink(i, std::move(m));
    }
}

} // namespace tilescope
