#include "compile/triton.h"

#include "base/pythonfiles.h"
#include "compile/helperprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace tilescope {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kHelperScript = "tilescope_triton_compile.py";
// Starting Python and importing Triton: seconds, more on a cold disk.
constexpr int kHelloTimeoutMs = 180'000;
// One compile: Triton takes seconds for a large kernel; past this something hangs.
constexpr int kCompileTimeoutMs = 600'000;
// What of a helper's own error output a failure quotes.
constexpr std::size_t kStderrTail = 4096;
constexpr const char* kInstallHint =
    "Triton kernels are compiled by Triton, in Python: install it with 'python3 -m pip install triton' (in a "
    "virtual environment: python3 -m venv ENV && ENV/bin/pip install triton), and set TILESCOPE_PYTHON to that "
    "Python (ENV/bin/python) where it is not the python3 on PATH";

std::atomic<unsigned> g_fileCounter{0};

fs::path scratchFile(const char* suffix) {
    std::error_code ec;
    fs::path dir = fs::temp_directory_path(ec);
    if (ec)
        dir = "/tmp";
    return dir / ("tilescope-triton-" + std::to_string(::getpid()) + "-" + std::to_string(g_fileCounter++) + suffix);
}

std::string tailOf(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (text.size() > kStderrTail)
        text = "..." + text.substr(text.size() - kStderrTail);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

// One helper process: its stdin and stdout are one end of a socket pair (a write to a helper
// that died is an error, not a SIGPIPE); its stderr a file of its own, quoted when it dies.
class Helper {
public:
    // Starts `python script` and reads its first line (which Triton it has). Null, with the
    // reason in `why`, when it does not start or says nothing; `hello` is its first line.
    static std::unique_ptr<Helper> start(const std::string& python, const fs::path& script, json& hello,
                                         std::string& why) {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
            why = std::string("cannot make a socket for the Triton helper: ") + std::strerror(errno);
            return nullptr;
        }
        auto helper = std::unique_ptr<Helper>(new Helper());
        helper->m_fd = fds[0];
        helper->m_errFile = scratchFile(".log");

        int rc = 0;
        helper->m_pid = spawnHelperProcess({python, "-u", script.string()}, fds[1], helper->m_errFile.string(), rc);
        ::close(fds[1]);
        if (rc != 0) {
            helper->m_pid = -1;
            why = "cannot start " + python + ": " + std::strerror(rc) + ". " + kInstallHint;
            return nullptr;
        }
        bool timedOut = false;
        const std::optional<std::string> line = helper->readLine(kHelloTimeoutMs, timedOut);
        if (!line) {
            helper->markBroken();
            const std::string err = tailOf(helper->m_errFile);
            why = python + " " +
                  (timedOut ? "said nothing within " + std::to_string(kHelloTimeoutMs / 1000) + " s" : "ended") +
                  " before it said which Triton it has" + (err.empty() ? std::string() : ": " + err) + ". " +
                  kInstallHint;
            return nullptr;
        }
        hello = json::parse(*line, nullptr, false);
        if (!hello.is_object() || !hello.contains("hello")) {
            helper->markBroken();
            why = python + " is not Python running Tilescope's Triton helper (its first line: " + line->substr(0, 200) +
                  "). " + kInstallHint;
            return nullptr;
        }
        return helper;
    }

    ~Helper() {
        if (m_fd >= 0)
            ::close(m_fd); // the helper reads the end of its input and leaves
        if (m_pid > 0 && m_kill) {
            ::kill(m_pid, SIGKILL);
            int status = 0;
            while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
            }
        } else if (m_pid > 0) {
            ::waitpid(m_pid, nullptr, WNOHANG);
        }
        std::error_code ec;
        fs::remove(m_errFile, ec);
    }
    Helper(const Helper&) = delete;
    Helper& operator=(const Helper&) = delete;

    bool send(const std::string& line) {
        std::size_t sent = 0;
        while (sent < line.size()) {
            const ssize_t n = ::send(m_fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return false;
            sent += static_cast<std::size_t>(n);
        }
        return true;
    }

    std::optional<std::string> readLine(int timeoutMs, bool& timedOut) {
        timedOut = false;
        const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
        for (;;) {
            if (const std::size_t newline = m_buffer.find('\n'); newline != std::string::npos) {
                std::string line = m_buffer.substr(0, newline);
                m_buffer.erase(0, newline + 1);
                return line;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) {
                timedOut = true;
                return std::nullopt;
            }
            pollfd p{m_fd, POLLIN, 0};
            const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
            if (ready < 0 && errno != EINTR)
                return std::nullopt;
            if (ready <= 0)
                continue;
            char chunk[65536];
            const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return std::nullopt;
            m_buffer.append(chunk, static_cast<std::size_t>(n));
        }
    }

    // After a failure: the process is killed when the helper goes (it may be stuck).
    void markBroken() { m_kill = true; }
    // How it ended, when it has ended, and the end of what it wrote to stderr.
    std::string endingReport(bool& killedHard) {
        killedHard = false;
        std::string how;
        int status = 0;
        pid_t done = 0;
        for (int i = 0; i < 20 && done == 0; ++i) {
            done = ::waitpid(m_pid, &status, WNOHANG);
            if (done == 0)
                ::usleep(50'000);
        }
        if (done == m_pid) {
            m_pid = -1;
            if (WIFSIGNALED(status)) {
                killedHard = WTERMSIG(status) == SIGKILL;
                how = std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                      strsignal(WTERMSIG(status)) + ")";
            } else if (WIFEXITED(status)) {
                how = "exited with status " + std::to_string(WEXITSTATUS(status));
            }
        }
        const std::string err = tailOf(m_errFile);
        return (how.empty() ? std::string("stopped answering") : how) + (err.empty() ? std::string() : ": " + err);
    }

private:
    Helper() = default;
    int m_fd = -1;
    pid_t m_pid = -1;
    bool m_kill = false;
    fs::path m_errFile;
    std::string m_buffer;
};

// The helpers not compiling now, for the next compile to take.
class HelperPool {
public:
    std::unique_ptr<Helper> take() {
        std::lock_guard lock(m_mutex);
        if (m_idle.empty())
            return nullptr;
        std::unique_ptr<Helper> helper = std::move(m_idle.back());
        m_idle.pop_back();
        return helper;
    }
    void give(std::unique_ptr<Helper> helper) {
        std::lock_guard lock(m_mutex);
        m_idle.push_back(std::move(helper));
    }

private:
    std::mutex m_mutex;
    std::vector<std::unique_ptr<Helper>> m_idle;
};

HelperPool& helperPool() {
    static HelperPool pool;
    return pool;
}

fs::path helperScript(std::string* why) {
    std::string searched;
    fs::path script = findPythonFile(kHelperScript, &searched);
    if (script.empty() && why)
        *why = std::string("cannot find Tilescope's Triton compile helper ") + kHelperScript + " (looked in " +
               searched + ")";
    return script;
}

CompileResult failure(std::string message, std::string log, bool transient) {
    CompileResult result;
    result.status = CompileStatus::CompileError;
    result.message = std::move(message);
    result.log = boundedLog(log.empty() ? result.message : std::move(log));
    result.transient = transient;
    const TritonSetup& setup = tritonSetup();
    result.nvrtcVersion = setup.ok ? "Triton " + setup.version : "Triton";
    return result;
}

std::int64_t integerOf(const json& metadata, const char* key, std::int64_t otherwise) {
    const auto it = metadata.find(key);
    return it != metadata.end() && it->is_number_integer() ? it->get<std::int64_t>() : otherwise;
}

// A keyword's value as the helper gets it: the JSON the request holds, or the text as a string
// when it is not JSON (a request made by hand).
json keywordValue(const std::string& text) {
    json value = json::parse(text, nullptr, false);
    return value.is_discarded() ? json(text) : value;
}

} // namespace

const TritonSetup& tritonSetup() {
    static const TritonSetup setup = [] {
        TritonSetup s;
        s.python = tilescopePython();
        const fs::path script = helperScript(&s.error);
        if (script.empty())
            return s;
        json hello;
        std::unique_ptr<Helper> helper = Helper::start(s.python, script, hello, s.error);
        if (!helper)
            return s;
        const std::string executable = hello.value("executable", s.python);
        if (hello.contains("error")) {
            helper->markBroken(); // it leaves by itself; reaped here
            s.error = s.python + " (" + executable + ", Python " + hello.value("python", std::string("?")) +
                      ") cannot import triton (" + hello.value("error", std::string()) + "). " + kInstallHint;
            return s;
        }
        s.version = hello.value("triton", std::string());
        s.identity = "triton " + s.version + " " + hello.value("environment", json::object()).dump();
        s.nvdisasm = hello.value("nvdisasm", std::string());
        s.ok = true;
        helperPool().give(std::move(helper));
        return s;
    }();
    return setup;
}

std::string_view tritonTypeName(ElementType type) {
    switch (type) {
    case ElementType::Bool:
        return "i1";
    case ElementType::Int8:
        return "i8";
    case ElementType::UInt8:
        return "u8";
    case ElementType::Int16:
        return "i16";
    case ElementType::UInt16:
        return "u16";
    case ElementType::Int32:
        return "i32";
    case ElementType::UInt32:
        return "u32";
    case ElementType::Int64:
        return "i64";
    case ElementType::UInt64:
        return "u64";
    case ElementType::Half:
        return "fp16";
    case ElementType::BFloat16:
        return "bf16";
    case ElementType::Float:
        return "fp32";
    case ElementType::Double:
        return "fp64";
    case ElementType::Float8E4M3:
        return "fp8e4nv";
    case ElementType::Float8E5M2:
        return "fp8e5";
    }
    return "fp32";
}

CompileResult compileTriton(const CompileRequest& request) {
    const auto start = Clock::now();
    auto finish = [&](CompileResult result) {
        result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return result;
    };
    const TritonSetup& setup = tritonSetup();
    if (!setup.ok)
        return finish(failure(setup.error, {}, true));
    if (request.kernelName.empty())
        return finish(failure("no kernel name given", {}, false));
    const std::size_t digits = request.arch.find_first_not_of("0123456789", 3);
    if (request.arch.rfind("sm_", 0) != 0 || digits == 3)
        return finish(failure("arch '" + request.arch + "' is not a real GPU architecture such as sm_90", {}, false));

    // A helper kept from an earlier compile, else a new one.
    auto startHelper = [&](std::string& why) -> std::unique_ptr<Helper> {
        const fs::path script = helperScript(&why);
        json hello;
        return script.empty() ? nullptr : Helper::start(setup.python, script, hello, why);
    };
    bool pooled = true;
    std::unique_ptr<Helper> helper = helperPool().take();
    if (!helper) {
        pooled = false;
        std::string why;
        if (!(helper = startHelper(why)))
            return finish(failure(why, {}, true));
    }

    const fs::path cubinFile = scratchFile(".cubin");
    json arguments = json::array();
    for (const std::string& a : request.arguments)
        arguments.push_back(keywordValue(a));
    json keywords = json::object();
    for (const auto& [name, value] : request.defines)
        keywords[name] = keywordValue(value);
    const json message{{"id", 1},
                       {"file", request.sourceName.empty() ? std::string("kernel.py") : request.sourceName},
                       {"dir", request.includeDirs.empty() ? std::string() : request.includeDirs.front()},
                       {"source", request.source},
                       {"function", request.kernelName},
                       {"arguments", std::move(arguments)},
                       {"keywords", std::move(keywords)},
                       {"arch", request.arch},
                       {"cubin", cubinFile.string()}};
    const std::string text = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    bool sent = helper->send(text);
    if (!sent && pooled) {
        // A kept helper that ended while it waited (killed from outside): this request never
        // reached it, so a new one takes it.
        helper->markBroken();
        std::string why;
        if (!(helper = startHelper(why)))
            return finish(failure(why, {}, true));
        sent = helper->send(text);
    }
    bool timedOut = false;
    std::optional<std::string> line;
    if (sent)
        line = helper->readLine(kCompileTimeoutMs, timedOut);
    if (!line) {
        // The helper died compiling this config (Triton's compiler crashed, or ran out of
        // memory) or hangs: the config's compile error. A crash repeats for the same request;
        // a kill (the system out of memory) or a hang may not.
        helper->markBroken();
        bool killedHard = false;
        std::string how = timedOut ? "did not finish within " + std::to_string(kCompileTimeoutMs / 1000) + " s"
                                   : helper->endingReport(killedHard);
        std::error_code ec;
        fs::remove(cubinFile, ec);
        return finish(failure("Triton's compiler process " + how, {}, timedOut || killedHard));
    }
    const json reply = json::parse(*line, nullptr, false);
    if (!reply.is_object()) {
        helper->markBroken();
        return finish(
            failure("the Triton helper answered with something that is not JSON: " + line->substr(0, 200), {}, true));
    }
    helperPool().give(std::move(helper));

    const std::string stderrText = reply.value("stderr", std::string());
    if (!reply.value("ok", false)) {
        std::string log = reply.value("error", std::string());
        if (!stderrText.empty())
            log += (log.empty() ? "" : "\n") + stderrText;
        std::error_code ec;
        fs::remove(cubinFile, ec);
        return finish(failure(reply.value("message", std::string("Triton refused the kernel")), std::move(log),
                              reply.value("internal", false)));
    }

    CompileResult result;
    {
        std::ifstream in(cubinFile, std::ios::binary);
        result.cubin.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        std::error_code ec;
        fs::remove(cubinFile, ec);
    }
    result.nvrtcVersion = "Triton " + reply.value("triton", setup.version);
    result.entryName = reply.value("name", request.kernelName);
    const std::string ptxasLog = reply.value("log", std::string());
    result.info = parsePtxasLog(ptxasLog, result.entryName);
    result.log = boundedLog(ptxasLog + (stderrText.empty() ? "" : "\n" + stderrText));
    const json metadata = reply.value("metadata", json::object());
    LaunchMetadata launch;
    launch.threadsPerBlock =
        static_cast<int>(integerOf(metadata, "num_warps", 4) * integerOf(metadata, "warp_size", 32));
    launch.sharedBytes = integerOf(metadata, "shared", 0);
    launch.clusterSize = static_cast<int>(integerOf(metadata, "num_ctas", 1));
    // Triton 3's kernels take the global scratch and then the profile scratch after the call's
    // arguments (the Triton that made it names those it has).
    for (const char* kind : {"global", "profile"}) {
        const std::string size = std::string(kind) + "_scratch_size";
        if (metadata.contains(size))
            launch.scratch.push_back({integerOf(metadata, size.c_str(), 0),
                                      integerOf(metadata, (std::string(kind) + "_scratch_align").c_str(), 1)});
    }
    for (const json& type : reply.value("signature", json::array()))
        launch.argumentTypes.push_back(type.is_string() ? type.get<std::string>() : type.dump());
    result.launch = std::move(launch);
    if (result.cubin.empty()) {
        result.status = CompileStatus::CompileError;
        result.message = "Triton compiled " + request.kernelName + " but its cubin could not be read";
        result.transient = true;
    } else if (result.info.registers < 0) {
        result.status = CompileStatus::CompileError;
        result.message = "ptxas printed no report for " + result.entryName + ", so registers and spills are unknown";
        result.transient = true;
    } else {
        result.status = CompileStatus::Ok;
    }
    return finish(std::move(result));
}

} // namespace tilescope
