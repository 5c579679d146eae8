#pragma once

// Reads and writes past a buffer's end, as the engine and the worker both see them (no CUDA
// here, so all of it is tested without a GPU):
//
// - Guarded buffers. The worker can place each argument buffer so that it ends exactly where an
//   unmapped stretch of address space begins (CUDA's virtual memory management): a kernel that
//   runs past the end then faults every time, instead of reading or overwriting a neighbour
//   silently. guardedLayout() is where a buffer goes in its reservation, guardedFaultMessage()
//   what a fault in such a run says.
// - compute-sanitizer. `tune --sanitize` runs the reference config once in a worker under its
//   memcheck tool; findComputeSanitizer() finds the program, firstSanitizerReport() reads its
//   first report back and sanitizerMessage() ties the faulting address to the argument buffer
//   it lies in or next to.

#include "base/cudatools.h"
#include "measure/cuda/workerprotocol.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

/// Where a guarded buffer of `bytes` lies in its reservation of address space.
struct GuardedLayout {
    std::uint64_t mapped = 0;   ///< bytes backed by memory: the size rounded up to the granularity
    std::uint64_t guard = 0;    ///< unmapped bytes reserved after them
    std::uint64_t reserved = 0; ///< mapped + guard
    std::uint64_t offset = 0;   ///< the buffer's first byte, from the reservation's start
    /// Bytes between the buffer's end and the guard: less than the alignment. A run past the end
    /// by fewer bytes than this reads mapped memory and is not caught.
    std::uint64_t slack = 0;
};

/// The layout of a guarded buffer: `bytes` (0 counts as 1) rounded up to `granularity` (the
/// driver's allocation granularity, a power of two) are mapped; the buffer starts as late as
/// `alignment` (256, as cuMemAlloc aligns) allows, so that its end meets the unmapped guard.
/// The guard is at least one granule, and as large as the mapped part up to 256 MiB: address
/// space costs nothing until mapped, and a guard that large also catches an index that jumps far
/// past the end, where a thin guard would let it land in the next reservation.
GuardedLayout guardedLayout(std::uint64_t bytes, std::uint64_t granularity, std::uint64_t alignment = 256);

/// "1 element (4 B)", "1,048,576 elements (4 MiB)".
std::string sizeText(std::int64_t elements, std::int64_t bytes);
/// "'in' 1 element (4 B)", "argument 2 16 elements (64 B)" (an argument without a name).
std::string bufferText(const worker::BufferExtent& buffer);

/// The message of an illegal address in a run on guarded buffers: most likely a read or write
/// past a buffer's end, and every buffer with its size, so that the one declared too small shows.
std::string guardedFaultMessage(const std::vector<worker::BufferExtent>& buffers);

/// Where `address` lies among the argument buffers: "252 bytes past the end of 'in' (1 element,
/// 4 B), at its element 64"; "inside 'out' (...), at its element 12". `allocation`, when given
/// (the start of the allocation a report names as nearest), picks the buffer that starts there;
/// otherwise the buffer nearest the address. "" when there are no buffers.
std::string addressText(std::uint64_t address, const std::vector<worker::BufferExtent>& buffers,
                        std::optional<std::uint64_t> allocation = std::nullopt);

/// The first error compute-sanitizer's memcheck reported, read from its log.
struct SanitizerReport {
    std::string headline;                 ///< "Invalid __global__ read of size 4 bytes"
    std::string function;                 ///< the kernel as printed ("overrun", "void k<(int)4>(float *)"); "" unknown
    std::string location;                 ///< "overrun.cu:17" (the file name alone); "" without line information
    std::string thread;                   ///< "thread (64,0,0) in block (0,0,0)"; "" unknown
    std::optional<std::uint64_t> address; ///< the address accessed
    std::string addressProblem;           ///< "is out of bounds", "is misaligned"
    std::optional<std::uint64_t> nearest; ///< the nearest allocation's start
    std::optional<std::uint64_t> nearestBytes;
    std::vector<std::string> lines; ///< the report's lines without the prefix, for what is not read above
};

/// The first error report in a memcheck log (`========= Invalid __global__ read of size 4 bytes`,
/// then its indented lines: `at KERNEL+0x70 in FILE:LINE` (the location may have a line of its
/// own, or, from older versions, `at 0x70 in FILE:LINE:KERNEL`), `by thread (x,y,z) in block
/// (x,y,z)`, `Address 0x... is out of bounds` (or `Access to 0x...`), `and is N bytes after the
/// nearest allocation at 0x... of size M bytes`). Memory errors come before API errors (`Program
/// hit ...`); nullopt when the log reports no error.
std::optional<SanitizerReport> firstSanitizerReport(std::string_view log);

/// The report as a result's message: "compute-sanitizer (memcheck): Invalid __global__ read of
/// size 4 bytes at overrun.cu:17 in overrun by thread (64,0,0) in block (0,0,0); the address is
/// 252 bytes past the end of 'in' (1 element, 4 B), at its element 64".
std::string sanitizerMessage(const SanitizerReport& report, const std::vector<worker::BufferExtent>& buffers);

/// compute-sanitizer's path: $TILESCOPE_COMPUTE_SANITIZER when set (it must be an executable
/// file), else the first executable `compute-sanitizer` on PATH, beside nvcc on PATH, in
/// $CUDA_HOME, $CUDA_PATH or $CUDA_ROOT, then in `cudaDirs` (each as bin/compute-sanitizer or
/// compute-sanitizer/compute-sanitizer). An empty path, and in `error` what was searched and
/// what to install, when there is none.
std::filesystem::path findComputeSanitizer(std::string* error,
                                           const std::vector<std::filesystem::path>& cudaDirs = standardCudaDirs());

/// Bytes of padding compute-sanitizer puts after every allocation under --sanitize: a run past a
/// buffer's end by up to this much is an error even where another buffer follows it.
inline constexpr std::size_t kSanitizerPadding = std::size_t{4} << 20;

/// The command that runs a worker under memcheck, before the worker's own arguments: the report
/// goes to `logFile`, a few errors at most, no host backtraces, no API errors (the worker's
/// expected failures would crowd out the kernel's), kSanitizerPadding after each allocation.
std::vector<std::string> sanitizerCommand(const std::filesystem::path& sanitizer, const std::filesystem::path& logFile);

} // namespace tilescope
