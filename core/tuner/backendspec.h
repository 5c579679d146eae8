#pragma once

// Where a session's measurements come from, as people and front ends name it: "replay:FILE"
// (a recording), "cuda" or "cuda:0,1" (this machine's GPUs), "ssh://user@host/0,1" (GPUs of
// another machine, through the user's own ssh), "analysis:sm_90" (compile for an arch, measure
// nothing). Parsing, the label a session records, and the one place the CLI and the workbench
// build the backend (ReplayBackend, CudaBackend, AnalysisBackend) and compile service from it.

#include "compile/compileservice.h"
#include "measure/cuda/cudabackend.h"
#include "measure/replay/replaybackend.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

struct BackendSpec {
    enum class Kind {
        Replay,   ///< answers from a recording
        Cuda,     ///< measures on GPUs through tilescope-worker processes
        Analysis, ///< compiles for an arch and records static info only
    };
    Kind kind = Kind::Replay;
    std::filesystem::path recording; ///< Replay: the recording as given
    std::vector<int> devices;        ///< Cuda: device ordinals, one worker each
    /// Cuda on another machine: "user@host" or "host" (ssh://); "" this machine.
    std::string host;
    int port = 0;     ///< ssh's port (0: ssh's default)
    std::string arch; ///< Analysis: "sm_90"

    /// The session's backend as recorded (resume matches on it): "replay:" + the recording's
    /// absolute path, "cuda:0,1", "ssh://user@host/0,1", "analysis:sm_90".
    std::string label() const;
    /// The command that starts a worker on `host`, before the worker's own arguments: `ssh`
    /// ($TILESCOPE_SSH when set), -T, BatchMode (no password prompt: keys or an agent), the port,
    /// the host. Empty for this machine.
    std::vector<std::string> launcher() const;
    /// Whether sessions on it compile configs (and need a CompileService).
    bool compiles() const { return kind != Kind::Replay; }
};

/// Parses "replay:FILE", "cuda", "cuda:DEVICES", "ssh://[USER@]HOST[:PORT][/DEVICES]" or "analysis:ARCH". Throws
/// InputError (location `field`) for anything else, an empty file or arch, or a bad device list. The arch is checked
/// when the backend opens.
BackendSpec parseBackendSpec(std::string_view text, const std::string& field = "--backend");

/// "0" or "0,1,2" (spaces allowed) -> device ordinals. Throws InputError (location `field`) for a
/// piece that is not a non-negative number, a device listed twice, or an empty list.
std::vector<int> parseDeviceList(std::string_view text, const std::string& field = "--devices");

/// Splits a command line into words as a shell would for plain words: spaces separate, single
/// and double quotes group, a backslash escapes the next character. Throws InputError (location
/// `field`) for an unterminated quote.
std::vector<std::string> splitCommand(std::string_view text, const std::string& field = "--launcher");

/// What the backends take beyond their spec: the CUDA backend's settings (its devices come from the
/// spec, and so does its launcher unless one is set here) and the replay's pace.
struct BackendOptions {
    CudaBackendOptions cuda;
    ReplayOptions replay;
};

/// The backend `spec` names: a ReplayBackend of its recording, a CudaBackend on its devices (through
/// ssh for ssh://), or an AnalysisBackend for its arch. Throws InputError for a recording that
/// cannot be read.
std::unique_ptr<Backend> makeBackend(const BackendSpec& spec, BackendOptions options = {});

/// What the compile service of sessions on `spec` is made of (nullopt when they compile nothing,
/// as a replay): `jobs` threads (0: one per hardware thread), the on-disk compile cache in
/// `cacheDirectory` ("": the default folder) unless `useCache` is false.
std::optional<CompileServiceOptions> compileServiceOptions(const BackendSpec& spec, unsigned jobs = 0,
                                                           bool useCache = true,
                                                           const std::filesystem::path& cacheDirectory = {});

/// The compile service of sessions on `spec` (null when they compile nothing, as a replay): `jobs`
/// threads (0: one per hardware thread), through the on-disk compile cache in `cacheDirectory`
/// ("": the default folder) unless `useCache` is false.
std::unique_ptr<CompileService> makeCompileService(const BackendSpec& spec, unsigned jobs = 0, bool useCache = true,
                                                   const std::filesystem::path& cacheDirectory = {});

} // namespace tilescope
