#pragma once

// Compiling one kernel variant: (source, defines, options, arch) -> cubin + what ptxas reports
// about the entry function (registers, spills, stack, static shared memory). NVRTC runs here
// without a GPU or driver, for any arch it supports. Everything is a value type, and a result
// depends only on the request and the NVRTC version (bar `seconds` and `cached`; cubins were seen
// to be byte-identical across runs and threads), so a cache can key results on the whole request
// (compileOptions() spells out what NVRTC sees) plus nvrtcVersionString().

#include "compile/kernelsource.h"
#include "model/staticinfo.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

/// One "Compiling entry function" block of a ptxas -v log.
struct PtxasEntry {
    std::string function; ///< as ptxas names it: the mangled name unless the kernel is extern "C"
    std::string arch;     ///< "sm_90"
    StaticInfo info;

    bool operator==(const PtxasEntry&) const = default;
};

/// Every entry function of a ptxas -v log (as NVRTC or nvcc -Xptxas -v prints it), in log order.
/// Fields missing from the log keep their defaults; lines it does not know are skipped.
std::vector<PtxasEntry> parsePtxasEntries(std::string_view log);

/// The static info of entry `kernelName` in a ptxas -v log: the first entry of that name, or the
/// one compiled for `arch` when given. registers == -1 when the log has no such entry.
StaticInfo parsePtxasLog(std::string_view log, std::string_view kernelName, std::string_view arch = {});

/// What a request's source is, and so what compiles it.
enum class SourceLanguage : std::uint8_t {
    Cuda,   ///< CUDA C++, compiled by NVRTC in this process
    Triton, ///< a Python module with a @triton.jit kernel, compiled by Triton in a helper process (compile/triton.h)
};

/// What compiles a CUDA C++ request.
enum class CudaCompiler : std::uint8_t {
    Nvrtc, ///< NVRTC in this process
    Nvcc,  ///< the toolkit's nvcc in a process of its own (compile/nvcc.h), for a problem that asks for it
};

/// One kernel variant to compile.
///
/// For Triton (language Triton) the fields mean: `source` the module's text, `sourceName` its
/// file name (the line information names it), `kernelName` the @triton.jit function, `defines`
/// the call's keyword arguments (tl.constexpr values and compile options such as num_warps),
/// each a name and its value as JSON ("128", "true", "\"leaky_relu\""), `arguments` the call's
/// other arguments, `includeDirs` the kernel's folder first (Python imports from it), `arch` the
/// target; `options` are not used.
struct CompileRequest {
    std::string source;     ///< CUDA C++ text (a Python module for Triton)
    std::string sourceName; ///< shown in diagnostics, e.g. "sgemm.cu"
    /// The entry function as C++ names it: "sgemm", "ns::kernel", "scale<block_size_x, 4>". Found
    /// through NVRTC's name expressions, so it need not be extern "C"; template arguments may
    /// name defines (tuning parameters).
    std::string kernelName;
    /// Put before the source as Kernel Tuner does (compile/kernelsource.h: "#define NAME VALUE",
    /// loop_unroll_factor names as constexpr int, then "#line 1"), in this order.
    std::vector<std::pair<std::string, std::string>> defines;
    std::vector<std::string> options;     ///< more NVRTC options (T1 CompilerOptions)
    std::string arch;                     ///< a real arch: "sm_90"
    std::vector<std::string> includeDirs; ///< -I, in this order
    SourceLanguage language = SourceLanguage::Cuda;
    /// For CUDA: NVRTC, or nvcc where the problem asks for it (Tilescope.Compiler); the same
    /// source, defines, options and include dirs either way.
    CudaCompiler compiler = CudaCompiler::Nvrtc;
    /// Triton: the call's arguments for the kernel's parameters that are not tl.constexpr, in
    /// order, each as JSON: {"pointer": "fp16"} for a buffer (aligned to 16 bytes, as the
    /// worker's are), a number or a boolean for a value (what Triton specialises on: an integer
    /// divisible by 16, or equal to 1). Empty for CUDA.
    std::vector<std::string> arguments;

    bool operator==(const CompileRequest&) const = default;
};

enum class CompileStatus {
    Ok,           ///< cubin and static info are set
    CompileError, ///< NVRTC rejected the source or the options; `message` and `log` say why
    NoKernel,     ///< the source has no __global__ function that kernelName names (or ptxas reported none)
    Cancelled,    ///< never compiled: the caller cancelled the batch (CompileService::compileAll)
};

/// "Ok", "CompileError", "NoKernel", "Cancelled". (Not toString: Qt Test finds toString by ADL for QCOMPARE.)
std::string_view compileStatusName(CompileStatus status);

/// How a binary whose compiler decides its own launch is launched (a Triton kernel: its warps,
/// its shared memory, the scratch buffers it takes after the problem's arguments). Absent for
/// CUDA C++, whose launch the problem's expressions decide.
struct LaunchMetadata {
    int threadsPerBlock = 0;      ///< num_warps x 32; 0: the problem's LocalSize decides
    std::int64_t sharedBytes = 0; ///< dynamic shared memory per block (opted in past 48 KiB)
    int clusterSize = 1;          ///< blocks per cluster along x (Triton's num_ctas); 1: no cluster
    /// Pointer parameters after the problem's Arguments, in order: each gets a buffer of
    /// bytesPerBlock x blocks of the grid x clusterSize bytes (aligned to `align`), or null when
    /// bytesPerBlock is 0. Triton 3: the global scratch, then the profile scratch.
    struct Scratch {
        std::int64_t bytesPerBlock = 0;
        std::int64_t align = 1;
        bool operator==(const Scratch&) const = default;
    };
    std::vector<Scratch> scratch;
    /// Per Argument of the problem, in order, the type the kernel takes it as, in Triton's words
    /// ("*fp16" a pointer, "i32", "i64", "u1", "fp32"), or "constexpr" for a value compiled into
    /// the binary (Triton specialises an integer equal to 1 so), which the kernel does not take:
    /// the launch passes the others only. Empty: every Argument, as the problem declares it.
    std::vector<std::string> argumentTypes;

    bool operator==(const LaunchMetadata&) const = default;
};

struct CompileResult {
    CompileStatus status = CompileStatus::CompileError;
    std::string message;      ///< one line for the user; empty when Ok
    std::string log;          ///< NVRTC's program log: diagnostics and the ptxas report (less ptxas' timing line)
    std::vector<char> cubin;  ///< the ELF image; empty on CompileError
    StaticInfo info;          ///< of kernelName, for the requested arch
    std::string entryName;    ///< the entry's name in the cubin (mangled unless extern "C"), for loading it
    double seconds = 0.0;     ///< wall time spent in NVRTC
    std::string nvrtcVersion; ///< "13.0"
    bool cached = false;      ///< served from the on-disk cache (`seconds` is then the original compile's)
    /// The failure may not repeat (NVRTC out of memory, a cancelled batch): never cached.
    /// Errors the source, defines, options or arch cause are deterministic and cached.
    bool transient = false;
    /// compileCacheKey of the request it answers, set by CompileService ("" when compiled without
    /// one): results with one key are one binary, whatever configs asked for it.
    std::string key;
    /// Set by compilers that decide the launch themselves (Triton); nullopt for CUDA C++.
    std::optional<LaunchMetadata> launch;

    bool ok() const { return status == CompileStatus::Ok; }
};

/// What of a compiler's log is kept with a result (the results store it, and exports copy it):
/// the first 64 KiB, each line cut at 1 KiB, saying what was left out. A very long line or
/// thousands of diagnostics add nothing that the first ones do not say.
std::string boundedLog(std::string log);

/// Why `request` cannot be given to a compiler, in one line for the user, or "" when it can: no
/// kernel name, an arch that is no real one ("sm_90"), an arch whose number is not among `archs`
/// (when they are given: the compiler's list, which `compiler` names, "NVRTC 13.0"), a define
/// whose name is not an identifier or whose value holds a carriage return. Both NVRTC and nvcc
/// ask it first: they would misread rather than reject some of it (an option is one argv
/// element, so a define name with a space or '=' would silently define something else).
std::string checkCompileRequest(const CompileRequest& request, const std::vector<std::string>& archs = {},
                                std::string_view compiler = {});

/// The exact NVRTC option list compileKernel() uses for `request`: the arch, the ptxas report,
/// the include dirs, then the request's options, then the CUDA toolkit's include folders
/// (nvrtcHeaders(): CCCL's, then the toolkit's own). Deterministic, for cache keys and for showing
/// the user what ran.
std::vector<std::string> compileOptions(const CompileRequest& request);

/// The text NVRTC compiles for `request`: its source with the defines' prefix
/// (prepareKernelSource).
inline std::string preparedSource(const CompileRequest& request) {
    return prepareKernelSource(request.source, request.defines);
}

/// Compiles `request` with NVRTC to a cubin for request.arch and parses the ptxas report (a
/// Triton request: with Triton, compileTriton in compile/triton.h; an nvcc request with nvcc,
/// compileNvcc in compile/nvcc.h).
/// Synchronous and thread-safe: no shared state but read-only statics, one nvrtcProgram per call
/// (seen: 15 threads compiling 2761 variants concurrently). NVRTC runs in this thread's helper
/// process where there is one (compile/nvrtchelper.h), since its front end compiles one program
/// at a time in a process; the result is the same. Never
/// throws for anything the source, defines or options can cause: that is a CompileError result.
CompileResult compileKernel(const CompileRequest& request);

/// NVRTC's PTX for `request`: the same source, defines and options, for the request's arch as a
/// virtual arch (sm_90 -> compute_90), without running ptxas. For reading the code a config
/// compiles to, and for checking our static info against the stand-alone ptxas on the very PTX
/// NVRTC makes (nvcc's front end makes different PTX from the same source). `ok` is false with
/// the reason in `log` when NVRTC fails.
struct PtxResult {
    bool ok = false;
    std::string ptx;
    std::string log;
};
PtxResult generatePtx(const CompileRequest& request);

/// The NVRTC version this program runs with: "13.0".
std::string nvrtcVersionString();

/// The real archs this NVRTC can compile for, ascending: "sm_75", ..., "sm_121".
std::vector<std::string> supportedArchs();

} // namespace tilescope
