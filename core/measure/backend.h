#pragma once

// Where measurements come from. A backend is opened for one problem at one shape, then measures
// configs: the CUDA backend dispatches them to one worker process per GPU as workers become idle
// and reports each result as it completes, taking further configs from the caller's feed while it
// runs (no device waits for a batch's slowest config); the MPI backend does the same across ranks;
// the replay backend answers from a recording; the analysis backend reports what compiling tells,
// for an arch without its GPU. Each is driven by a TuningSession on one thread.

#include "analysis/gpuarch.h"
#include "compile/compiler.h"
#include "model/measurement.h"
#include "space/configspace.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tilescope {

class TuningProblem;

/// What a backend tells the session once opened.
struct BackendInfo {
    std::string kind;        ///< "replay", "cuda"
    std::string description; ///< for people: "replay of rec.json (Kernel Tuner cache, 2761 results)"
    std::string deviceName;  ///< "NVIDIA H200"; "" unknown
    std::string arch;        ///< "sm_90"; "" unknown (then the session compiles only for an arch it is given)
    /// Every distinct arch of the devices it measures on, `arch` first; empty when that is `arch` alone.
    std::vector<std::string> archs;
    /// The device's limits, for pruning configs that cannot launch; nullopt: none known (nothing
    /// is pruned by limits). A replay gives the recorded device's arch table entry when it knows one.
    std::optional<ArchLimits> limits;
    std::string provenanceJson = "{}"; ///< device UUID, driver, CUDA version, SM clock, ... (JSON object)
    bool needsCubins = false;          ///< measure() needs each config's compiled cubin (CUDA)
    /// Times are recorded, not spent (a replay): the session's time budget counts the recorded
    /// compile and benchmark times instead of the wall clock.
    bool simulated = false;
    std::size_t preferredBatch = 1; ///< configs per measure() call that keep every device busy
};

/// The archs a session compiles each config for: the one the user gives (`requested`), else
/// every arch of the backend's devices, its primary `arch` first; empty when neither knows one.
std::vector<std::string> sessionArchs(const std::string& requested, const BackendInfo& backend);

/// One compile of a config, for one arch.
struct ArchCompile {
    std::string arch;                      ///< "sm_90"
    const CompileResult* result = nullptr; ///< cubin and static info
};

/// One config to measure.
struct MeasureItem {
    std::uint64_t index = 0; ///< in the session's ConfigSpace
    Config config;           ///< value indices
    /// Its compiles, one per arch of sessionArchs() in that order; empty when not compiled.
    std::vector<ArchCompile> compiles;

    /// The compile for the session's first arch (static info, the reference); null when none.
    const CompileResult* compiled() const { return compiles.empty() ? nullptr : compiles.front().result; }
    /// The compile for a device of `arch`: the one made for it, else the first (a session told
    /// to compile for one arch runs that cubin everywhere); null when none.
    const CompileResult* compiledFor(std::string_view arch) const;
};

/// Adds at most `wanted` configs to a measure() call that is running (MeasureControl::feed): called
/// on the thread that called measure(), when a device could take a config and every item so far is
/// handed out. Appends to `out`; none appended: none is ready now.
using MeasureFeed = std::function<void(std::size_t wanted, std::vector<MeasureItem>& out)>;

/// Limits of one measure() call.
struct MeasureControl {
    double perConfigSeconds = 0; ///< a config measured longer than this is a Timeout (0 = no cap)
    /// Past it, configs not started come back Skipped ("the run's time cap was reached").
    std::optional<std::chrono::steady_clock::time_point> deadline;
    const std::atomic<bool>* cancel = nullptr; ///< once set, configs not started come back Skipped ("cancelled")
    /// Configs whose time is clearly above this may stop sampling early (their median is less
    /// precise, and not needed: they do not rank near the best). 0: sample every config fully.
    /// Read as each config is handed to a device: the feed may lower it while the call runs.
    double slowerThanMs = 0;
    /// > 0: counters (the profiling pass) only for configs whose median is at or under this: those
    /// that rank near the best so far; analysis still has every config's static information.
    /// Read as each config is handed to a device, as slowerThanMs. 0: every config's counters;
    /// < 0: none (a search's first configs: SessionOptions::profileTop).
    double profileUnderMs = 0;
    /// Each config's counters, with one sample of its time (kept by no one): the configs that
    /// ranked, profiled after the search. Other rules of timing do not apply.
    bool countersOnly = false;
    /// Return every timed sample (Measurement::samplesMs): a final round pools them.
    bool keepSamples = false;
    /// > 0: take this many samples of each config (fewer only past the backend's time cap) and
    /// time alone, no counters: one round of an interleaved comparison. 0: the backend's rule.
    int samplesPerConfig = 0;
    /// Parameters (indices into the problem's) whose values each make a group of configs verified
    /// against the first correct config of the group, not against one config for all: where a
    /// parameter changes what the kernel computes (time steps per launch). Empty: the problem's
    /// Tilescope.VerifyWithin.
    std::vector<std::size_t> verifyWithin;
    /// Set: the call goes on with the configs the feed adds as devices go idle (numbered after the
    /// call's own items, in the order added, for the sink) and returns once nothing is in flight
    /// and the feed adds none. A fed item's compiles must live until its result reaches the sink.
    /// Backends that measure batch by batch (replay, analysis) never call it: the caller then
    /// calls measure() again.
    MeasureFeed feed;
};

/// The items of one measure() call, those given and those its feed added since (for backends that
/// take a feed). A fed item is kept until forget() says its result was reported.
class MeasureItems {
public:
    MeasureItems(std::span<const MeasureItem> given, const MeasureControl& control)
        : m_given(given)
        , m_control(control) {}
    /// Items given and fed so far.
    std::size_t size() const { return m_given.size() + m_added; }
    /// Item `i`, given or fed and not yet forgotten.
    const MeasureItem& operator[](std::size_t i) const;
    /// Asks the feed for up to `wanted` more; their numbers, none when it has no feed or none ready.
    std::vector<std::size_t> more(std::size_t wanted);
    /// Item `i`'s result has reached the sink: a fed item is dropped (its compiles may go).
    void forget(std::size_t i);

private:
    std::span<const MeasureItem> m_given;
    const MeasureControl& m_control;
    std::size_t m_added = 0;
    std::unordered_map<std::size_t, MeasureItem> m_fed;
};

/// Receives item `item`'s measurement, on the thread that called measure(), in completion order.
using MeasureSink = std::function<void(std::size_t item, Measurement measurement)>;

class Backend {
public:
    virtual ~Backend() = default;
    /// Prepares to measure configs of `problem` at shape `shapeIndex` (whose space is `space`;
    /// all three outlive the backend's use). Throws InputError when it cannot: a recording of
    /// another problem or shape, no device.
    virtual BackendInfo open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space) = 0;
    /// Measures every item exactly once (and those control.feed adds, where the backend takes a
    /// feed) and reports each to `sink` before returning. Nothing a config does makes it throw:
    /// faults, hangs and errors are results.
    virtual void measure(std::span<const MeasureItem> items, const MeasureControl& control,
                         const MeasureSink& sink) = 0;
    /// Releases devices and workers. Called once the session ends; safe to call twice.
    virtual void close() {}
    /// Measures from now on with the inputs a Random fill gives for `seed` (a second input set:
    /// a kernel right only by accident of the data shows it), each config still compared with its
    /// reference config run on the same inputs. Whether the inputs changed: false when the
    /// problem has no Random fill or the backend cannot (a recording, static analysis).
    virtual bool reseed(std::uint64_t /*seed*/) { return false; }
};

} // namespace tilescope
