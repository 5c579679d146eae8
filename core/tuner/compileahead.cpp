#include "tuner/compileahead.h"

#include <algorithm>
#include <chrono>

namespace tilescope {

bool PendingConfig::ready() const {
    auto done = [](const std::future<CompileResult>& f) {
        return !f.valid() || f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    };
    return done(future) && std::all_of(otherFutures.begin(), otherFutures.end(), done);
}

void PendingConfig::collect() {
    if (future.valid())
        compiled = future.get();
    for (auto& f : otherFutures)
        others.push_back(f.get());
    otherFutures.clear();
}

CompileAhead::CompileAhead(CompileService& compiler, const StaticAnalyzer& analyzer, std::vector<std::string> archs,
                           std::shared_ptr<std::atomic<bool>> abandon)
    : m_compiler(&compiler)
    , m_analyzer(&analyzer)
    , m_archs(std::move(archs))
    , m_abandon(std::move(abandon)) {}

PendingConfig CompileAhead::submit(std::uint64_t index, Config config) const {
    PendingConfig p;
    p.index = index;
    p.config = std::move(config);
    if (compiling() && !m_archs.empty()) {
        p.future = submitFirst(p.config);
        for (std::size_t a = 1; a < m_archs.size(); ++a)
            p.otherFutures.push_back(
                m_compiler->submit(m_analyzer->requests().request(p.config, m_archs[a]), m_abandon));
    }
    return p;
}

std::future<CompileResult> CompileAhead::submitFirst(const Config& config) const {
    return m_compiler->submit(m_analyzer->requests().request(config, m_archs.front()), m_abandon);
}

MeasureItem CompileAhead::measureItem(const PendingConfig& p) const {
    MeasureItem item;
    item.index = p.index;
    item.config = p.config;
    if (p.compiled) {
        item.compiles.push_back({m_archs.front(), &*p.compiled});
        for (std::size_t a = 0; a < p.others.size() && a + 1 < m_archs.size(); ++a)
            item.compiles.push_back({m_archs[a + 1], &p.others[a]});
    }
    return item;
}

std::optional<StaticFeatures> CompileAhead::featuresOf(std::uint64_t index, const Config& config,
                                                       const CompileResult& cr) const {
    if (!cr.ok())
        return std::nullopt;
    const ConfigAnalysis a = m_analyzer->analyze(index, config, m_archs.front(), cr);
    StaticFeatures f;
    f.info = a.info;
    f.blockSize = a.geometry.threadsPerBlock();
    f.sharedBytes = a.sharedBytes();
    f.occupancy = a.occupancy.percent();
    f.launchable = a.occupancy.launchable;
    return f;
}

void CompileAhead::feed(StrategyContext& context, const ConfigSpace& space) const {
    if (!compiling())
        return;
    const std::string& arch = m_archs.front();
    context.staticFeatures = [this, &space, arch](std::uint64_t index) -> std::optional<StaticFeatures> {
        if (index >= space.size())
            return std::nullopt;
        const Config config = space.at(index);
        return featuresOf(index, config, m_compiler->compile(m_analyzer->requests().request(config, arch)));
    };
    context.staticFeaturesMany =
        [this, &space, arch](std::span<const std::uint64_t> indices) -> std::vector<std::optional<StaticFeatures>> {
        // Submitted together: the compile pool works on them in parallel (cache hits are instant).
        std::vector<std::future<CompileResult>> futures;
        for (const std::uint64_t index : indices)
            futures.push_back(index < space.size()
                                  ? m_compiler->submit(m_analyzer->requests().request(space.at(index), arch))
                                  : std::future<CompileResult>());
        std::vector<std::optional<StaticFeatures>> out(indices.size());
        for (std::size_t i = 0; i < indices.size(); ++i)
            if (futures[i].valid())
                out[i] = featuresOf(indices[i], space.at(indices[i]), futures[i].get());
        return out;
    };
}

} // namespace tilescope
