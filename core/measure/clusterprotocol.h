#pragma once

// What travels between the ranks of an MPI job (measure/mpi): a compile handed to a rank (the
// whole request) and its result sent back (the cubin in the blob), a config handed to a slot with
// its compiles (cubins in the blob) and the limits of its measurement, and the backend info a
// rank's slots report when opened; all as worker::Frame (a JSON header and a blob), packed into
// one message. No MPI here: the encoding is tested on its own.

#include "measure/backend.h"
#include "measure/cuda/workerprotocol.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::cluster {

/// The version of what travels, said in rank 0's "hello": a rank that speaks another (a node with
/// another build of Tilescope) says so and leaves. 2: ranks compile ("compile", "compiled"); 3:
/// Triton compiles and their launch.
inline constexpr int kProtocolVersion = 3;

/// A frame as one message: u32 header length (little-endian), the header, the blob.
std::vector<char> pack(const worker::Frame& frame);
/// The frame of a message; an empty header when the bytes are not one.
worker::Frame unpack(const std::vector<char>& bytes);

/// A config handed to a slot, with everything it points to.
struct SlotJob {
    std::uint64_t id = 0; ///< rank 0's number for it, unique in the job
    int slot = 0;         ///< which of the rank's slots measures it
    MeasureItem item;
    std::vector<std::shared_ptr<const CompileResult>> compiles; ///< item.compiles point into these
    double perConfigSeconds = 0;
    std::optional<std::chrono::steady_clock::time_point> deadline; ///< travels as the time left
    double slowerThanMs = 0;
    double profileUnderMs = 0;
    bool keepSamples = false;
    int samplesPerConfig = 0;
    bool countersOnly = false;
};

/// A "measure" frame: the config, each compile's status, static info and entry name, their
/// cubins one after another in the blob.
worker::Frame encodeJob(const SlotJob& job);
/// Throws std::runtime_error for a frame that is not one (cubins shorter than their sizes say).
SlotJob decodeJob(const worker::Frame& frame);

/// A "compile" frame: request `id` (rank 0's number for it), the whole request (source text
/// included: a rank needs only the files the source includes).
worker::Frame encodeCompile(std::uint64_t id, const CompileRequest& request);
struct CompileJob {
    std::uint64_t id = 0;
    CompileRequest request;
};
/// Throws std::runtime_error for a frame that is not one.
CompileJob decodeCompile(const worker::Frame& frame);

/// A "compiled" frame: the result of compile `id`, everything of it (the log, the key), the cubin
/// in the blob; `fresh`: NVRTC ran for it on that rank (not a cache hit, not shared).
worker::Frame encodeCompiled(std::uint64_t id, const CompileResult& result, bool fresh);
struct Compiled {
    std::uint64_t id = 0;
    CompileResult result;
    bool fresh = false;
};
/// Throws std::runtime_error for a frame that is not one (a cubin shorter than its size says).
Compiled decodeCompiled(const worker::Frame& frame);

/// A slot's BackendInfo as JSON text, and back (the limits come again from the arch's table).
std::string backendInfoJson(const BackendInfo& info);
BackendInfo backendInfoOf(std::string_view json);

} // namespace tilescope::cluster
