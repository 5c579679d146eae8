#pragma once

// What the fuzz harnesses share: each harness is one program that defines
// LLVMFuzzerTestOneInput (libFuzzer's entry point) over one parser of user input. An input may
// be refused with InputError or ExprError (a located message, the expected outcome for most
// inputs); any other exception escaping a parser is a bug, reported as a crash with the input.

#include "base/error.h"
#include "base/jsonreader.h"
#include "expr/expr.h"
#include "model/records.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

namespace tilescope::fuzz {

/// Runs `parse` on one input; a refusal is fine, anything else aborts with what escaped.
template <typename F>
void refuseCleanly(const char* what, F&& parse) {
    try {
        parse();
    } catch (const InputError&) {
    } catch (const expr::ExprError&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: an input escaped as %s: %s\n", what, typeid(e).name(), e.what());
        std::abort();
    }
}

/// Aborts when a session that a reader accepted holds what no recording may: a result without a
/// configuration, a status of no name, a time that is negative or not finite, an ok result whose
/// time is not above zero (it would rank first). Checked here by hand, not by the readers' own
/// rule, so that the harness judges that rule.
inline void expectSoundRecording(const char* what, const SessionData& session) {
    for (std::size_t i = 0; i < session.results.size(); ++i) {
        const ResultRecord& r = session.results[i];
        const TimingStats& t = r.measurement.time;
        const char* fault = nullptr;
        if (r.config.empty())
            fault = "an empty configuration";
        else if (statusName(r.status()) == "unknown")
            fault = "a status of no name";
        for (const double ms : {t.medianMs, t.minMs, t.maxMs, t.stdevMs, t.ciLowMs, t.ciHighMs})
            if (!fault && (!std::isfinite(ms) || ms < 0))
                fault = "a negative or infinite time";
        if (!fault && r.status() == ResultStatus::Ok && !(t.medianMs > 0 && std::isfinite(t.medianMs)))
            fault = "an ok result with a time of 0 or below";
        if (fault) {
            std::fprintf(stderr, "%s: accepted result %zu with %s (median %g ms, status %d)\n", what, i + 1, fault,
                         t.medianMs, static_cast<int>(r.status()));
            std::abort();
        }
    }
}

/// Aborts when an accepted file's result (a T4 result, a cache entry: `entry`, the JSON as the
/// file holds it) names a status this build does not know in its "tilescope" object, or its
/// configuration (`configuration`, null where the format keeps the values elsewhere) is empty or
/// holds an integer past 2^63 - 1: what the session read cannot show, since an unknown status
/// would have been read as another and such an integer as a double.
inline void expectKnownFields(const char* what, const nlohmann::ordered_json& entry,
                              const nlohmann::ordered_json* configuration) {
    if (!entry.is_object())
        return;
    const auto fail = [&](const char* fault) {
        std::fprintf(stderr, "%s: accepted %s: %s\n", what, fault, showJson(entry).c_str());
        std::abort();
    };
    if (const auto ext = entry.find("tilescope"); ext != entry.end() && ext->is_object())
        if (const auto status = ext->find("status"); status != ext->end())
            if (!status->is_string() || !parseStatus(status->get<std::string>()))
                fail("an unknown status");
    if (configuration && (!configuration->is_object() || configuration->empty()))
        fail("an empty configuration");
    if (configuration)
        for (const auto& [name, value] : configuration->items())
            if (value.is_number_unsigned() && value.get<std::uint64_t>() > 9223372036854775807u)
                fail("a parameter value past a 64-bit signed integer");
}

} // namespace tilescope::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
