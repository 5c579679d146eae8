#include "compile/nvrtchelper.h"

#include "base/pythonfiles.h"
#include "compile/compilewire.h"
#include "compile/helperprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tilescope {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Starting the worker program and loading NVRTC: well under a second; past this it is not one.
constexpr int kNvrtcHelloMs = 10'000;

std::atomic<bool> g_inHelper{false}; // this process is a helper: it compiles itself

// A message: the header's and the blob's byte counts (u32, u64, little-endian), the header (JSON
// text), the blob (the source, or the cubin).
bool writeAll(int fd, const char* data, std::size_t size, bool socket) {
    while (size > 0) {
        const ssize_t n = socket ? ::send(fd, data, size, MSG_NOSIGNAL) : ::write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= std::size_t(n);
    }
    return true;
}

bool writeMessage(int fd, const std::string& header, const std::vector<char>& blob, bool socket) {
    char sizes[12];
    const auto h = static_cast<std::uint32_t>(header.size());
    const auto b = static_cast<std::uint64_t>(blob.size());
    for (int i = 0; i < 4; ++i)
        sizes[i] = char((h >> (8 * i)) & 0xff);
    for (int i = 0; i < 8; ++i)
        sizes[4 + i] = char((b >> (8 * i)) & 0xff);
    return writeAll(fd, sizes, sizeof sizes, socket) && writeAll(fd, header.data(), header.size(), socket) &&
           writeAll(fd, blob.data(), blob.size(), socket);
}

enum class Read { Ok, Ended, Broken, TimedOut };

// Reads `size` bytes; Ended when the stream ends before the first, Broken when it ends after.
Read readAll(int fd, char* data, std::size_t size, int timeoutMs) {
    const std::size_t total = size;
    while (size > 0) {
        if (timeoutMs >= 0) {
            pollfd p{fd, POLLIN, 0};
            const int ready = ::poll(&p, 1, timeoutMs);
            if (ready < 0 && errno == EINTR)
                continue;
            if (ready == 0)
                return Read::TimedOut;
        }
        const ssize_t n = ::read(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return size == total ? Read::Ended : Read::Broken;
        data += n;
        size -= std::size_t(n);
    }
    return Read::Ok;
}

Read readMessage(int fd, std::string& header, std::vector<char>& blob, int timeoutMs = -1) {
    unsigned char sizes[12];
    if (const Read r = readAll(fd, reinterpret_cast<char*>(sizes), sizeof sizes, timeoutMs); r != Read::Ok)
        return r;
    std::uint32_t h = 0;
    std::uint64_t b = 0;
    for (int i = 0; i < 4; ++i)
        h |= std::uint32_t(sizes[i]) << (8 * i);
    for (int i = 0; i < 8; ++i)
        b |= std::uint64_t(sizes[4 + i]) << (8 * i);
    if (h > (64u << 20) || b > (std::uint64_t(4) << 30))
        return Read::Broken;
    header.resize(h);
    blob.resize(std::size_t(b));
    if (readAll(fd, header.data(), h, timeoutMs) != Read::Ok ||
        readAll(fd, blob.data(), blob.size(), timeoutMs) != Read::Ok)
        return Read::Broken;
    return Read::Ok;
}

std::string exitText(int status) {
    if (WIFSIGNALED(status))
        return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    return "ended";
}

// One helper: the worker program in its compile mode (compile/helperprocess.h), its standard
// error /dev/null.
class NvrtcHelper {
public:
    static std::unique_ptr<NvrtcHelper> start(const fs::path& program, std::string& why) {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
            why = std::string("cannot make a socket: ") + std::strerror(errno);
            return nullptr;
        }
        auto helper = std::unique_ptr<NvrtcHelper>(new NvrtcHelper());
        helper->m_fd = fds[0];
        int rc = 0;
        helper->m_pid = spawnHelperProcess({program.string(), "--compile"}, fds[1], std::string(), rc);
        ::close(fds[1]);
        if (rc != 0) {
            helper->m_pid = -1;
            why = "cannot start " + program.string() + ": " + std::strerror(rc);
            return nullptr;
        }
        std::string header;
        std::vector<char> blob;
        if (helper->read(header, blob, kNvrtcHelloMs) != Read::Ok) {
            why = program.string() + " --compile said nothing";
            return nullptr;
        }
        const json hello = json::parse(header, nullptr, false);
        const std::string theirs = hello.is_object() ? hello.value("nvrtc", std::string()) : std::string();
        if (theirs != nvrtcVersionString()) {
            why = program.string() + " runs NVRTC " + theirs + ", this program " + nvrtcVersionString();
            return nullptr;
        }
        return helper;
    }

    /// The helper's result; nullopt when it died first, with how in `why`.
    std::optional<CompileResult> compile(const CompileRequest& request, std::string& why) {
        const std::string header = compileRequestJson(request).dump(-1, ' ', false, json::error_handler_t::replace);
        std::string replyHeader;
        std::vector<char> blob;
        if (!writeMessage(m_fd, header, std::vector<char>(request.source.begin(), request.source.end()), true) ||
            read(replyHeader, blob, -1) != Read::Ok) {
            why = reap();
            return std::nullopt;
        }
        try {
            std::size_t offset = 0;
            return compileResultOf(json::parse(replyHeader), blob, offset);
        } catch (const std::exception& e) {
            why = std::string("answered what cannot be read (") + e.what() + ")";
            return std::nullopt;
        }
    }

    ~NvrtcHelper() {
        if (m_pid > 0)
            reap();
    }

private:
    NvrtcHelper() = default;

    Read read(std::string& header, std::vector<char>& blob, int timeoutMs) {
        return readMessage(m_fd, header, blob, timeoutMs);
    }

    // Closes the helper's input, which ends it, and waits for it (so that it leaves no zombie): a
    // moment to leave, then it is killed (a compile that does not end). How it ended.
    std::string reap() {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
        int status = 0;
        pid_t done = 0;
        for (int i = 0; i < 200 && (done = ::waitpid(m_pid, &status, WNOHANG)) == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (done == 0) {
            ::kill(m_pid, SIGKILL);
            while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
            }
        }
        m_pid = -1;
        return exitText(status);
    }

    pid_t m_pid = -1;
    int m_fd = -1;
};

// The helper program, or "" when helpers are off here.
const fs::path& helperProgram() {
    static const fs::path program = [] {
        if (const char* env = std::getenv("TILESCOPE_NVRTC_HELPERS"); env && std::string(env) == "off")
            return fs::path();
        const fs::path worker = workerProgram();
        return ::access(worker.c_str(), X_OK) == 0 ? worker : fs::path();
    }();
    return program;
}

} // namespace

std::optional<CompileResult> compileInNvrtcHelper(const CompileRequest& request) {
    if (g_inHelper.load() || helperProgram().empty())
        return std::nullopt;
    thread_local std::unique_ptr<NvrtcHelper> helper;
    thread_local bool unavailable = false; // this thread's helper did not start: it compiles itself
    if (unavailable)
        return std::nullopt;
    if (!helper) {
        std::string why;
        helper = NvrtcHelper::start(helperProgram(), why);
        if (!helper) {
            unavailable = true;
            return std::nullopt;
        }
    }
    std::string why;
    if (std::optional<CompileResult> result = helper->compile(request, why))
        return result;
    helper.reset();
    CompileResult failed;
    failed.status = CompileStatus::CompileError;
    failed.message = "NVRTC did not finish compiling this config: its compile helper " + why;
    failed.log = failed.message;
    failed.nvrtcVersion = nvrtcVersionString();
    failed.transient = true; // another helper may compile it (a helper killed for memory)
    return failed;
}

int serveNvrtcCompiles(int in, int out) {
    g_inHelper = true;
    struct sigaction ignore {}; // a reply to a program that has gone fails as a write
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, nullptr);
    if (out == STDOUT_FILENO) {
        // Replies on a descriptor of their own; what NVRTC or anything else prints goes to stderr.
        out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (out < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            return 4;
    }
    if (!writeMessage(out, json{{"nvrtc", nvrtcVersionString()}}.dump(), {}, false))
        return 0;
    for (;;) {
        std::string header;
        std::vector<char> blob;
        const Read r = readMessage(in, header, blob);
        if (r == Read::Ended)
            return 0;
        if (r != Read::Ok)
            return 4;
        CompileRequest request;
        try {
            request = compileRequestOf(json::parse(header), std::string(blob.begin(), blob.end()));
        } catch (const std::exception&) {
            return 4;
        }
        const CompileResult result = compileKernel(request);
        const std::string reply = compileResultJson(result, true).dump(-1, ' ', false, json::error_handler_t::replace);
        if (!writeMessage(out, reply, result.cubin, false))
            return 0; // the program went away
    }
}

} // namespace tilescope
