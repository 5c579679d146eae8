#pragma once

// The conversation between the engine and a tilescope-worker process (one per GPU).
//
// The worker reads requests from one pipe and writes replies to another (file descriptors given
// on its command line, so stray output of CUDA or CUPTI on stdout cannot corrupt the stream).
// A frame is: u32 header length, u32 blob length (both little-endian), the header (a JSON
// object whose "type" names the message) and the blob (a cubin, or nothing).
//
//   worker  -> engine   hello     once at start: the device and its provenance, or why not
//   engine  -> worker   open      a problem (T1 text), shape, seed: allocate and fill buffers
//   worker  -> engine   opened    ok, or why not (an argument it cannot build, out of memory)
//   engine  -> worker   measure   one config: its parameter values, the cubin (blob), the
//                                 timing rule, whether to verify, which metrics
//   worker  -> engine   result    its Measurement; `fatal` when the context is lost (the worker
//                                 exits after sending it and the engine starts a fresh one)
//   engine  -> worker   shutdown  release everything and exit 0
//
// No CUDA here: both sides include this header.

#include "compile/compiler.h"
#include "model/measurement.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::worker {

/// One frame: the JSON header text and the blob.
struct Frame {
    std::string header;
    std::vector<char> blob;
};

/// Writes a whole frame to `fd` (retrying on EINTR and short writes). False when the pipe is
/// closed or broken (the other side died); SIGPIPE must be ignored by the caller.
bool writeFrame(int fd, const Frame& frame);

enum class ReadStatus {
    Ok,
    Closed,  ///< the other side closed the pipe (or died) before a frame began
    Broken,  ///< a frame ended early, or its lengths are absurd
    TimedOut ///< nothing complete arrived within the timeout
};

/// Reads one frame from `fd`. `timeoutMs` < 0 waits for ever; otherwise the whole frame must
/// arrive within it. A frame larger than 1 GiB is Broken.
ReadStatus readFrame(int fd, Frame& frame, int timeoutMs = -1);

/// The device a worker owns, as it reports it in `hello`.
struct DeviceInfo {
    int ordinal = -1;
    std::string name; ///< "NVIDIA H200"
    std::string uuid; ///< "GPU-8c1f..."
    std::string arch; ///< "sm_90"
    int smCount = 0;
    std::int64_t l2Bytes = 0;
    std::int64_t globalMemoryBytes = 0;
    int smClockKHz = 0; ///< the maximum SM clock the driver reports
    int memoryClockKHz = 0;
    int driverVersion = 0; ///< cuDriverGetVersion: 13000
    std::string cuptiNote; ///< "" when CUPTI counters can be read; otherwise why not
    double copyGBps = 0;   ///< a device-to-device copy's read + written GB/s (0: not measured)
    std::string stateNote; ///< "" when the clocks and temperature are read per config (NVML); otherwise why not
};

struct Hello {
    bool ok = false;
    std::string error; ///< when !ok: "no NVIDIA driver (libcuda.so.1 not found)", "no device 3", ...
    DeviceInfo device;
};

/// How long to measure one config (the method of resources/docs/guide/measuring.md: warm-up, an L2 flush before every
/// sample, CUDA events per sample, stop when the median is known well enough).
struct TimingRule {
    int minSamples = 10;
    int maxSamples = 200;
    /// Stop once stdev/mean of the samples, or the half-width of the median's 95 % interval over
    /// the median, is at most this (the interval: order statistics, robust to a few outliers).
    double targetRelStdev = 0.005;
    double warmupSeconds = 0.005; ///< launches before the first sample, at least one
    double maxSeconds = 0.25;     ///< kernel time to spend sampling one config (past it, stop at 3 samples or more)
    /// Before each sample, write over the L2 (the flush), so every sample starts from a cold
    /// cache; false: back to back, the L2 warm with what the last launch left (the warm context).
    bool flushL2 = true;
    /// With flushL2: bytes written before each sample (0: twice the L2, a full flush). Less than
    /// the L2 leaves part of the kernel's data in it, as a predecessor of that size would.
    std::int64_t l2WriteBytes = 0;
    bool keepSamples = false; ///< return every sample (Measurement::samplesMs)
    /// Stop after 5 samples or more once the median's 95 % interval lies above this: a config
    /// clearly slower than the best so far needs no precise time (0: never).
    double slowerThanMs = 0;
    /// > 0: the profiling pass (CUPTI's counters) only for a config whose median is at or under
    /// this: the configs that rank near the best so far (0: every config; < 0: none).
    double profileUnderMs = 0;
};

/// The measurement context of a rule, for people and provenance: "flush" (every sample from a
/// cold L2), "warm" (back to back), "pollute 16 MiB" (that many bytes written before each sample).
std::string l2ContextName(const TimingRule& rule);
/// Sets the rule's context from its text: "flush", "warm", or "pollute:SIZE" with SIZE in bytes
/// or with a unit (K, M, G, KiB, MiB, GiB, KB, MB, GB: all binary). Returns "" or why not.
std::string setL2Context(std::string_view text, TimingRule& rule);

struct Open {
    std::string problemText; ///< the problem's T1 JSON
    std::string problemName; ///< for messages ("sgemm.json")
    std::string baseDir;     ///< the problem's folder: data files (ReferenceArguments' DataSource) are relative to it
    std::uint64_t shape = 0;
    std::uint64_t seed = 0; ///< for Random fills: each argument's RandomSeed, or this
    /// Allocate the argument buffers guarded from the start (see Guard): the first config a fresh
    /// worker runs is usually guarded, and this saves moving the buffers before it.
    bool guard = false;
};

/// Where an argument's buffer lies on the device: for messages that name the buffer an address
/// is in or next to, and the arguments a guarded fault points at.
struct BufferExtent {
    std::size_t argument = 0;  ///< its index in the problem's Arguments
    std::string name;          ///< as the problem names it ("" when it has none)
    std::uint64_t address = 0; ///< the device address of its first byte
    std::int64_t bytes = 0;
    std::int64_t elements = 0; ///< T1 elements (Size)
    bool guarded = false;      ///< it ends at an unmapped guard
};

struct Opened {
    bool ok = false;
    std::string error;
    std::int64_t bufferBytes = 0;      ///< device memory taken by the problem's arguments
    std::vector<BufferExtent> buffers; ///< the Vector arguments' buffers, in argument order
    std::string note; ///< "" or what a person should know once (guarded buffers unavailable on this device)
};

/// Which launches of a config run on guarded buffers: each buffer then ends exactly at an unmapped
/// page, so a read or write past its end faults every time instead of touching a neighbour.
enum class Guard : std::uint8_t {
    Off,   ///< ordinary allocations throughout
    Check, ///< the first launch (the verification, or one launch when not verifying) guarded, the timed ones not
    Always ///< every launch guarded, timing and profiling too
};

struct Measure {
    std::uint64_t id = 0; ///< echoed in the result
    /// The config: for each parameter of the problem, in its order, the index of its value in
    /// that parameter's value list (as ConfigSpace's Config holds it).
    std::vector<std::uint16_t> config;
    std::string kernelName; ///< the entry function in the cubin
    TimingRule timing;
    bool verify = true;
    /// Which elements of the outputs the launch wrote is checked against the reference config's
    /// (measure/cuda/outputcheck.h), and NaN or Inf where the reference is finite, also when
    /// verify is off: one launch on canaried outputs, no comparison of values.
    bool checkWrites = true;
    /// This config's outputs become the reference of its group that the others are compared with:
    /// the values when verifying, and which elements it wrote (when the config itself fails, no
    /// reference is kept).
    bool makeReference = false;
    /// The reference group the config belongs to ("" one for all): the values of the parameters
    /// the outputs depend on (Tilescope.VerifyWithin), "temporal_tiling_factor=2".
    std::string referenceGroup;
    std::vector<std::string> metrics; ///< CUPTI metric names; empty: no profiling pass
    Guard guard = Guard::Off;
    /// Vector arguments (indices into the problem's Arguments) whose contents come back with the
    /// result, as they are right after the config's first launch on the arguments' initial
    /// contents (the verification launch, or one launch made for it when not verifying).
    std::vector<std::size_t> returnArguments;
    /// After everything else, one more launch with CUPTI's SASS metrics: how often each machine
    /// instruction of the kernel ran (Result::measurement.executed).
    bool executedCounts = false;
    /// The launch the kernel's compiler decided (a Triton kernel: its threads, shared memory,
    /// cluster and trailing scratch buffers), over the problem's LocalSize and SharedMemory.
    std::optional<LaunchMetadata> launch;
};

/// One argument's contents after a launch (Measure::returnArguments).
struct ArgumentContents {
    std::size_t argument = 0;
    std::vector<char> bytes;
};

/// What the worker learned from the loaded function (cuFuncGetAttribute) and its launch.
struct FunctionInfo {
    int registers = -1;
    std::int64_t localBytes = 0;   ///< per thread
    std::int64_t sharedStatic = 0; ///< per block
    int maxThreadsPerBlock = 0;
    int blocksPerSm = -1; ///< cuOccupancyMaxActiveBlocksPerMultiprocessor for the launch
    std::int64_t grid[3] = {1, 1, 1};
    std::int64_t block[3] = {1, 1, 1};
    std::int64_t sharedDynamic = 0;
};

struct Result {
    std::uint64_t id = 0;
    Measurement measurement; ///< status, time, metrics, verification error, message
    std::optional<FunctionInfo> function;
    bool fatal = false;       ///< the CUDA context is lost; the worker exits after this
    std::string metricsNote;  ///< once: why metrics could not be collected ("" = fine)
    std::string executedNote; ///< why Measure::executedCounts could not be counted ("" = fine or not asked)
    std::vector<ArgumentContents> outputs; ///< Measure::returnArguments that could be read (in the blob)
};

// Encoding. Every decode throws std::runtime_error for a header that is not the message.
Frame encode(const Hello& m);
Frame encode(const Open& m);
Frame encode(const Opened& m);
Frame encode(const Measure& m, std::vector<char> cubin);
Frame encode(const Result& m);
Frame encodeShutdown();

/// The "type" of a frame's header: "hello", "open", "opened", "measure", "result", "shutdown";
/// "" when the header is not JSON or has no type.
std::string frameType(const Frame& frame);

Hello decodeHello(const Frame& frame);
Open decodeOpen(const Frame& frame);
Opened decodeOpened(const Frame& frame);
Measure decodeMeasure(const Frame& frame); ///< the cubin stays in frame.blob
Result decodeResult(const Frame& frame);

/// A compile's static info as a JSON object, and back (other channels that carry compiles: the
/// MPI ranks of core/measure/mpi). The decode throws std::runtime_error for text that is not one.
std::string staticInfoJson(const StaticInfo& info);
StaticInfo staticInfoOf(std::string_view json);

/// The DeviceInfo as a JSON object (for a session's provenance).
std::string provenanceJson(const DeviceInfo& device);

} // namespace tilescope::worker
