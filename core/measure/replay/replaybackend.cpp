#include "measure/replay/replaybackend.h"

#include "base/error.h"
#include "base/textformat.h"
#include "exchange/configcodec.h"
#include "exchange/recordcheck.h"
#include "exchange/recording.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <unordered_map>

namespace tilescope {

struct ReplayBackend::State {
    std::vector<SessionData> sessions;
    std::string name;
    ReplayOptions options;
    const SessionData* chosen = nullptr;
    std::unordered_map<std::uint64_t, Measurement> table; // space index -> recorded outcome
    std::size_t matched = 0;
    std::size_t unmatched = 0;
};

ReplayBackend::ReplayBackend(const std::filesystem::path& recording, ReplayOptions options)
    : ReplayBackend(readRecording(recording), recording.string(), options) {}

ReplayBackend::ReplayBackend(std::vector<SessionData> sessions, std::string name, ReplayOptions options)
    : m_state(std::make_unique<State>()) {
    // Sessions held in memory come from anywhere (a reader, a test, the workbench): they answer
    // only what a recording read from a file may hold.
    for (const SessionData& s : sessions)
        checkRecordedSession(s, name);
    m_state->sessions = std::move(sessions);
    m_state->name = std::move(name);
    m_state->options = options;
}

ReplayBackend::~ReplayBackend() = default;

namespace {

std::string joinNames(const std::vector<std::string>& names) {
    return names.empty() ? "none" : joined(names);
}

std::string sizeText(const std::vector<std::int64_t>& size) {
    std::string text = "[";
    for (std::size_t i = 0; i < size.size(); ++i)
        text += (i ? ", " : "") + std::to_string(size[i]);
    return text + "]";
}

// Why `recorded` is not a recording of this problem at this shape ("" if it is).
std::string mismatch(const SessionInfo& recorded, const TuningProblem& problem, std::size_t shapeIndex,
                     const std::vector<std::int64_t>& problemSize) {
    if (!recorded.kernel.empty() && !problem.kernelName.empty() && recorded.kernel != problem.kernelName)
        return "it was recorded for kernel '" + recorded.kernel + "', the problem's kernel is '" + problem.kernelName +
               "'";
    std::vector<std::string> names;
    for (const auto& p : problem.parameters)
        names.push_back(p.name);
    std::vector<std::string> missing, extra;
    for (const auto& n : names)
        if (std::find(recorded.parameters.begin(), recorded.parameters.end(), n) == recorded.parameters.end())
            missing.push_back(n);
    for (const auto& n : recorded.parameters)
        if (std::find(names.begin(), names.end(), n) == names.end())
            extra.push_back(n);
    if (!missing.empty() || !extra.empty())
        return "its parameters (" + joinNames(recorded.parameters) + ") are not the problem's (" + joinNames(names) +
               "): " + (missing.empty() ? "" : "missing " + joinNames(missing)) +
               (!missing.empty() && !extra.empty() ? "; " : "") + (extra.empty() ? "" : "unknown " + joinNames(extra));
    static const Shape kNoShape;
    const Shape& shape = shapeIndex < problem.shapes.size() ? problem.shapes[shapeIndex] : kNoShape;
    if (!recorded.shape.empty() && !shape.dims.empty()) {
        auto sorted = [](std::vector<std::pair<std::string, std::int64_t>> dims) {
            std::sort(dims.begin(), dims.end());
            return dims;
        };
        if (sorted(recorded.shape) != sorted(shape.dims))
            return "it was recorded at shape " + recorded.shapeLabel() + ", and the problem's shape " +
                   std::to_string(shapeIndex) + " is " + shape.label() + " (--shape picks another)";
    } else if (!recorded.problemSize.empty() && !problemSize.empty() && recorded.problemSize != problemSize) {
        return "it was recorded at problem size " + sizeText(recorded.problemSize) + ", and the problem's shape " +
               std::to_string(shapeIndex) + " has ProblemSize " + sizeText(problemSize) + " (--shape picks another)";
    }
    return {};
}

} // namespace

BackendInfo ReplayBackend::open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space) {
    State& s = *m_state;
    s.table.clear();
    s.matched = s.unmatched = 0;
    s.chosen = nullptr;

    std::vector<std::int64_t> problemSize;
    if (!problem.problemSize.empty()) {
        expr::ValueList storage;
        problem.shapeSlots(shapeIndex, storage);
        for (const auto& v : storage.items())
            problemSize.push_back(v.i);
    }

    // The newest matching session first (a database's sessions come oldest first).
    std::string firstReason;
    for (auto it = s.sessions.rbegin(); it != s.sessions.rend(); ++it) {
        if (s.options.session && it->info.id != *s.options.session)
            continue;
        const std::string why = mismatch(it->info, problem, shapeIndex, problemSize);
        if (why.empty()) {
            s.chosen = &*it;
            break;
        }
        if (firstReason.empty())
            firstReason = why;
    }
    if (!s.chosen) {
        if (s.options.session && firstReason.empty())
            throw InputError(s.name, "", "the recording has no session " + std::to_string(*s.options.session));
        throw InputError(s.name, "", "the recording does not match the problem: " + firstReason);
    }

    const ConfigCodec codec(space);
    std::string firstMiss;
    for (const ResultRecord& r : s.chosen->results) {
        std::string why;
        const auto config = codec.fromValues(r.config, &why);
        std::optional<std::uint64_t> index;
        if (config) {
            index = space.indexOf(*config);
            if (!index)
                why = "not a valid config of the space (its conditions reject it)";
        }
        if (!index) {
            ++s.unmatched;
            if (firstMiss.empty())
                firstMiss = describeConfig(r.config) + ": " + why;
            continue;
        }
        // Later results of a config replace earlier ones, except that a placeholder never
        // replaces an outcome.
        auto [slot, inserted] = s.table.try_emplace(*index, r.measurement);
        if (inserted)
            ++s.matched;
        else if (isMeasured(r.measurement.status) || !isMeasured(slot->second.status))
            slot->second = r.measurement;
    }
    if (s.matched == 0)
        throw InputError(s.name, "",
                         "the recording does not match the problem: none of its " +
                             std::to_string(s.chosen->results.size()) + " results is a config of the problem's space" +
                             (firstMiss.empty() ? std::string() : " (the first: " + firstMiss + ")"));

    const SessionInfo& rec = s.chosen->info;
    BackendInfo info;
    info.kind = "replay";
    char buf[256];
    std::snprintf(buf, sizeof buf, "replay of %s (%s%s, %zu of %zu recorded configs in the space)", s.name.c_str(),
                  rec.backend.empty() ? "recording" : rec.backend.c_str(),
                  rec.id > 0 ? (", session " + std::to_string(rec.id)).c_str() : "", s.matched,
                  s.matched + s.unmatched);
    info.description = buf;
    info.deviceName = rec.deviceName;
    info.arch = rec.arch;
    if (const ArchLimits* limits = rec.arch.empty() ? nullptr : findArch(rec.arch))
        info.limits = *limits;
    nlohmann::ordered_json provenance = nlohmann::ordered_json::parse(rec.provenanceJson, nullptr, false);
    if (!provenance.is_object())
        provenance = nlohmann::ordered_json::object();
    provenance["replayed_from"] = s.name;
    if (rec.id > 0)
        provenance["replayed_session"] = rec.id;
    info.provenanceJson = provenance.dump();
    info.simulated = true;
    info.needsCubins = false;
    info.preferredBatch = 16;
    return info;
}

void ReplayBackend::measure(std::span<const MeasureItem> items, const MeasureControl& control,
                            const MeasureSink& sink) {
    const State& s = *m_state;
    for (std::size_t i = 0; i < items.size(); ++i) {
        Measurement m;
        const bool cancelled = control.cancel && control.cancel->load();
        const bool late = control.deadline && std::chrono::steady_clock::now() >= *control.deadline;
        if (cancelled || late) {
            m.status = ResultStatus::Skipped;
            m.message = cancelled ? "cancelled" : "the run's time cap was reached";
            sink(i, std::move(m));
            continue;
        }
        const auto it = s.table.find(items[i].index);
        auto wait = std::chrono::duration_cast<std::chrono::steady_clock::duration>(s.options.delay);
        if (s.options.pace > 0 && it != s.table.end())
            wait += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(s.options.pace * it->second.benchmarkSeconds));
        if (wait.count() > 0) {
            // Sleep in slices so that cancelling is prompt.
            const auto until = std::chrono::steady_clock::now() + wait;
            while (std::chrono::steady_clock::now() < until && !(control.cancel && control.cancel->load()))
                std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
                    std::chrono::milliseconds(5), until - std::chrono::steady_clock::now()));
        }
        if (it == s.table.end()) {
            m.status = ResultStatus::Skipped;
            m.message = "absent from the recording";
        } else {
            m = it->second;
            if (control.perConfigSeconds > 0 && m.benchmarkSeconds > control.perConfigSeconds &&
                m.status != ResultStatus::Skipped) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "the recorded benchmark took %.3g s, over the per-config cap of %.3g s",
                              m.benchmarkSeconds, control.perConfigSeconds);
                m.status = ResultStatus::Timeout;
                m.message = buf;
                m.time = {};
                m.metrics.clear();
                m.benchmarkSeconds = control.perConfigSeconds;
            }
        }
        sink(i, std::move(m));
    }
}

const SessionInfo& ReplayBackend::recordedSession() const {
    if (!m_state->chosen)
        throw std::logic_error("ReplayBackend: not opened");
    return m_state->chosen->info;
}

const SessionData& ReplayBackend::recordedData() const {
    if (!m_state->chosen)
        throw std::logic_error("ReplayBackend: not opened");
    return *m_state->chosen;
}

std::size_t ReplayBackend::matchedResults() const {
    return m_state->matched;
}
std::size_t ReplayBackend::unmatchedResults() const {
    return m_state->unmatched;
}

} // namespace tilescope
