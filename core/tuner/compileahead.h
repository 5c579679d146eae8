#pragma once

// Compiling ahead of measurement: each config the strategy proposes is submitted to the compile
// service for every arch of the session at once, and waits in the session's queue with its
// compiles in flight, so the device never waits for NVRTC.

#include "analysis/staticanalysis.h"
#include "compile/compileservice.h"
#include "measure/backend.h"
#include "search/strategy.h"

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tilescope {

/// A config on its way to the device, with its compiles in flight (none when the session does
/// not compile).
struct PendingConfig {
    std::uint64_t index = 0;
    Config config;
    std::future<CompileResult> future;
    std::optional<CompileResult> compiled;
    /// The compiles for the session's further archs (devices of another kind), in their order.
    std::vector<std::future<CompileResult>> otherFutures;
    std::vector<CompileResult> others;
    std::optional<ConfigAnalysis> analysis;

    /// Whether every compile has finished (collect() would not wait).
    bool ready() const;
    /// Waits for its compiles.
    void collect();
};

/// Submits configs' compiles for the archs of a session (sessionArchs: the first is the one of
/// static analysis and limits) and hands the backend what it measures.
class CompileAhead {
public:
    /// Compiles nothing: configs go to the backend without cubins.
    CompileAhead() = default;
    /// `compiler` and `analyzer` must outlive it. Compiles not started when `abandon` is set come
    /// back Cancelled.
    CompileAhead(CompileService& compiler, const StaticAnalyzer& analyzer, std::vector<std::string> archs,
                 std::shared_ptr<std::atomic<bool>> abandon);

    bool compiling() const { return m_compiler != nullptr; }
    /// Config `index` of the space with its compiles submitted.
    PendingConfig submit(std::uint64_t index, Config config) const;
    /// What the backend is given to measure `p` (its compiles collected).
    MeasureItem measureItem(const PendingConfig& p) const;
    /// The compile of `config` for the first arch, submitted (for a probe; abandoned with the rest).
    std::future<CompileResult> submitFirst(const Config& config) const;

    /// What compiling config `index` tells a strategy before it is measured: static info,
    /// geometry and occupancy; nullopt when the compile failed.
    std::optional<StaticFeatures> featuresOf(std::uint64_t index, const Config& config, const CompileResult& cr) const;
    /// Sets the context's staticFeatures and staticFeaturesMany: configs of `space` compiled for
    /// the first arch (in parallel for many; cache hits are instant). Nothing when not compiling.
    void feed(StrategyContext& context, const ConfigSpace& space) const;

private:
    CompileService* m_compiler = nullptr;
    const StaticAnalyzer* m_analyzer = nullptr;
    std::vector<std::string> m_archs;
    std::shared_ptr<std::atomic<bool>> m_abandon;
};

} // namespace tilescope
