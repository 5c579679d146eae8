#pragma once

// The headers an NVRTC compile can include, found as nvcc finds them. nvcc searches the CUDA
// toolkit's include folders, CCCL's among them (include/cccl since CUDA 13: CUB, Thrust, libcu++),
// and the host compiler's C and C++ library; NVRTC searches only the folders it is given and has
// no C library. So every NVRTC compile gets the toolkit's folders after the problem's own, and a
// few headers of its own (in memory, never on disk) for those NVRTC lacks: the C headers kernels
// include for printf, INFINITY, INT_MAX or int32_t, the C++ headers libcu++ provides (their names
// reach std through cuda::std), and CUB's umbrella header less its device-wide algorithms, which
// are host code NVRTC refuses.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

struct CompileRequest;

/// What every NVRTC compile of this process adds to the request's includes.
struct NvrtcHeaders {
    /// The toolkit whose headers are used: the one NVRTC was loaded from when it has headers of
    /// NVRTC's version, else the first of cudaToolkitRoots() that does (or that has any headers).
    /// Empty when none was found.
    std::filesystem::path root;
    std::vector<std::string> includeDirs;        ///< ROOT/include/cccl where it exists, then ROOT/include
    std::string toolkitVersion;                  ///< "13.0", from ROOT/include/cuda.h; "" when unknown
    std::vector<std::filesystem::path> searched; ///< the roots looked at, in order (for messages)
    /// Headers given to NVRTC by name, in memory: "stdio.h", "cstdint", "cub/cub.cuh", ...
    std::vector<std::string> names;
    std::vector<std::string> texts; ///< their texts, one per name
    /// Identifies all of the above (the folders, the version, the headers' texts): part of every
    /// compile cache key, so that another toolkit, or other headers, make other binaries.
    std::string digest;
};

/// This process's headers, found on first use (the environment then decides, once).
const NvrtcHeaders& nvrtcHeaders();

/// Finds them among `roots` (the folder NVRTC was loaded from first, when known) for NVRTC
/// version `nvrtcVersion` ("13.0"). For tests; nvrtcHeaders() is this with the process's own.
NvrtcHeaders findNvrtcHeaders(const std::vector<std::filesystem::path>& roots, const std::string& nvrtcVersion);

/// The text of the header `name` that Tilescope gives NVRTC, or nullptr when it gives none.
const std::string* nvrtcHeaderText(const NvrtcHeaders& headers, std::string_view name);

/// When `log` says NVRTC could not open an included file (`cannot open source file "NAME"`), the
/// first such line with the folders that were searched for it and the headers NVRTC has of its
/// own; "" otherwise. `request` gives the kernel's folders and options.
std::string missingHeaderMessage(std::string_view log, const CompileRequest& request, const NvrtcHeaders& headers);

/// When `log` says a warp intrinsic that CUDA 9 removed is undefined (`__shfl_down`, `__shfl`,
/// `__shfl_up`, `__shfl_xor`, `__any`, `__all`, `__ballot`), that error line saying so and naming
/// the _sync form that replaced it; "" otherwise.
std::string removedIntrinsicMessage(std::string_view log);

/// When `log` says a name of Kernel Tuner's `#pragma unroll loop_unroll_factor_N` convention is
/// undefined, that error line saying that it is defined only as a tuning parameter; "" otherwise.
std::string unrollFactorMessage(std::string_view log);

} // namespace tilescope
