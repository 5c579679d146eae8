#pragma once

// The failure watch: the first results of a run, while they all fail the same way. When configs
// from across the space failed alike, no tuning parameter explains the failure and the problem or
// its kernel is at fault: the session stops instead of spending its budget on it.

#include "base/error.h"
#include "compile/compiler.h"
#include "model/measurement.h"
#include "model/records.h"
#include "space/configspace.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <string>
#include <unordered_set>
#include <vector>

namespace tilescope {

class TuningProblem;

/// The first configs of a run all failed with the same status and message (a compile error, a
/// launch error, a crash), configs from across the space too: every value of every tuning
/// parameter with more than one value was among them (for compile errors, a few random configs
/// are compiled to see), so no parameter explains the failure and the problem or its kernel is at
/// fault. The session is marked failed; what is stored stays.
class SystematicFailure : public InputError {
public:
    using InputError::InputError;
};

/// Watches a run's first results (SessionOptions::stopOnSystematicFailure).
class FailureWatch {
public:
    /// Compiles a config (submitted to the session's compile service) to see whether it fails too.
    using CompileProbe = std::function<std::future<CompileResult>(const Config&)>;

    /// `problem` and `space` must outlive the watch; a watch made disabled never stops a run.
    FailureWatch(const TuningProblem& problem, const ConfigSpace& space, bool enabled = true);

    /// Whether it still watches: every result so far failed alike.
    bool active() const { return m_active; }
    /// A result of this run, of config `index`. Skipped and pruned results say nothing either way;
    /// a config that ran, or failed otherwise, ends the watch (the parameters matter).
    void observe(const ResultRecord& r, std::uint64_t index);
    /// Whether enough configs failed alike for check(): 5 at first, twice as many after each
    /// check that did not stop the run.
    bool due() const { return m_active && m_configs.size() >= m_nextCheck; }
    /// Checks the configs that failed alike. For compile errors, `probe` (when set) compiles up to
    /// 4 configs from anywhere in the space not in `done` (picked by `seed`); one that compiles or
    /// fails otherwise ends the watch. Returns, for SystematicFailure, why the problem is at fault
    /// when every parameter with several values took at least two of them among the failed
    /// configs; "" otherwise.
    std::string check(const std::unordered_set<std::uint64_t>& done, std::uint64_t seed, const CompileProbe& probe);

private:
    bool noParameterExplains() const;

    const TuningProblem& m_problem;
    const ConfigSpace& m_space;
    bool m_active = true;
    ResultStatus m_status = ResultStatus::Ok;
    std::string m_message;
    std::vector<Config> m_configs;
    std::size_t m_probed = 0;    // of them, configs compiled only to see whether they fail too
    std::size_t m_nextCheck = 5; // doubles after each check that did not stop the run
};

} // namespace tilescope
