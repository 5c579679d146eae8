#pragma once

// What the GPU did while a session measured: the range of its SM and memory clocks, temperature,
// P-states, power and clock-limit reasons over the configs (each sampled right after its timed
// samples, model/measurement.h's DeviceState), kept in the session's provenance, and whether the
// clocks moved enough to make the session's times disagree with each other.

#include "model/measurement.h"
#include "model/records.h"

#include <cstdint>
#include <string>

namespace tilescope {

class DeviceStateRange {
public:
    void add(const DeviceState& state);
    std::size_t count() const { return m_count; }

    /// As the provenance's "measured_state" object (JSON text): sm_clock_mhz and
    /// memory_clock_mhz as [min, median, max], temperature_c [min, max], pstates, power_w_max,
    /// clock_reasons (the union), samples, moved.
    std::string json() const;
    /// "" when the clocks held; otherwise for people: what moved and by how much.
    std::string movedNote() const;

private:
    std::size_t m_count = 0;
    std::vector<int> m_sm;
    std::vector<int> m_memory;
    int m_tempMin = 0;
    int m_tempMax = 0;
    std::uint32_t m_pstates = 0; // bit per P-state seen
    double m_powerMax = 0;
    std::uint64_t m_reasons = 0;
};

/// The clock-limit reasons that slow a GPU down (power cap, thermal and hardware slowdowns), as
/// words ("power cap, thermal"); "" when none of them is set. Idle and application clocks are
/// left out.
std::string slowdownReasons(std::uint64_t reasons);

/// The measured state of a session from its provenance JSON, for people ("SM 1980 MHz, memory
/// 3201 MHz, 34-41 °C, P0, up to 412 W"); "" when the provenance has none. `moved` (when given)
/// is set to the provenance's verdict, and the sentence then ends with what moved.
std::string measuredStateSentence(const std::string& provenanceJson, bool* moved = nullptr);

/// The compiler a session's provenance names, with its version: "NVRTC 13.0", "nvcc 13.0",
/// "Triton 3.5.0"; "" when it names none (a replay compiles nothing).
std::string provenanceCompiler(const std::string& provenanceJson);

/// Where a session's numbers come from, for people: "driver 13.0, NVRTC 13.0, Tilescope 0.1.0;
/// problem 3f2a9c1e, kernel source 8b0d77aa" (the first 8 hex digits of their SHA-256 hashes);
/// the compiler is the one the session compiled with (NVRTC, nvcc or Triton); the parts not
/// recorded are left out, "" when none is.
std::string provenanceSentence(const SessionInfo& info);

/// The L2 context the session measured in, from its provenance, for people: "flush (each sample
/// from a cold L2)", "warm (samples back to back)", "pollute 16 MiB (written before each
/// sample)"; "" when not recorded.
std::string measurementContext(const std::string& provenanceJson);

} // namespace tilescope
