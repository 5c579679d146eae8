// tilescope-worker: owns one GPU for the engine (core/measure/cuda/cudabackend) and answers its
// requests over two pipes (core/measure/cuda/workerprotocol.h). Wiring only: the work is in
// WorkerRuntime.

#include "compile/nvrtchelper.h"
#include "measure/cuda/device/workerruntime.h"
#include "measure/cuda/workerprotocol.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

namespace {

using namespace tilescope;

constexpr const char* kUsage =
    "Usage: tilescope-worker --device N (--in FD --out FD | --stdio)\n"
    "       tilescope-worker --compile\n"
    "\n"
    "Measures CUDA kernels on device N for the Tilescope engine, which starts one worker per GPU\n"
    "and talks to it over the file descriptors FD (requests in, replies out). Not for use by hand.\n"
    "\n"
    "Options:\n"
    "  --device N   the CUDA device ordinal\n"
    "  --in FD      the descriptor to read requests from\n"
    "  --out FD     the descriptor to write replies to\n"
    "  --stdio      requests on stdin, replies on stdout (started through ssh or another launcher);\n"
    "               anything else the process prints goes to stderr\n"
    "  --compile    compile CUDA C++ with NVRTC for the engine instead, requests on stdin and\n"
    "               results on stdout (NVRTC compiles one program at a time in a process, so the\n"
    "               engine runs one such helper per compile thread); no GPU is used\n"
    "  --help       this text\n"
    "  --version    the version\n"
    "\n"
    "It ignores SIGINT (the engine stops it after a Ctrl-C); SIGTERM ends it.\n"
    "\n"
    "Exit status: 0 shut down (or the engine went away), 1 bad arguments, 2 the device cannot be\n"
    "used (the reason is in the hello message and on stderr), 3 the CUDA context was lost (a\n"
    "config faulted; its result says so), 4 a broken or unknown request, 5 an internal error.\n";

struct Options {
    int device = -1;
    int in = -1;
    int out = -1;
    bool stdio = false;
};

int usageError(const std::string& message) {
    std::fprintf(stderr, "tilescope-worker: %s\n\n%s", message.c_str(), kUsage);
    return 1;
}

bool parseInt(std::string_view text, int& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() && value >= 0;
}

// Replaces bytes outside printable ASCII, so that a message with a stray byte (a file name in
// another encoding) still makes valid JSON.
void sanitize(std::string& s) {
    for (char& c : s) {
        if (static_cast<unsigned char>(c) >= 0x80 || (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t'))
            c = '?';
    }
}

void sanitize(worker::Hello& m) {
    sanitize(m.error);
    sanitize(m.device.name);
    sanitize(m.device.uuid);
    sanitize(m.device.cuptiNote);
}

void sanitize(worker::Opened& m) {
    sanitize(m.error);
    sanitize(m.note);
    for (worker::BufferExtent& b : m.buffers)
        sanitize(b.name);
}

void sanitize(worker::Result& m) {
    sanitize(m.measurement.message);
    sanitize(m.metricsNote);
    for (Metric& metric : m.measurement.metrics)
        sanitize(metric.name);
}

/// Sends a reply; false when the engine has gone (the pipe is closed).
template <typename Message>
bool send(int fd, Message message) {
    worker::Frame frame;
    try {
        frame = worker::encode(message);
    } catch (const std::exception&) {
        sanitize(message);
        frame = worker::encode(message);
    }
    return worker::writeFrame(fd, frame);
}

int serve(const Options& options) {
    cuda::WorkerRuntime runtime;
    const worker::Hello hello = runtime.start(options.device);
    const bool greeted = send(options.out, hello);
    if (!hello.ok) {
        std::fprintf(stderr, "tilescope-worker: device %d: %s\n", options.device, hello.error.c_str());
        return 2;
    }
    if (!greeted)
        return 0;

    for (;;) {
        worker::Frame frame;
        const worker::ReadStatus status = worker::readFrame(options.in, frame);
        if (status == worker::ReadStatus::Closed) {
            runtime.release();
            return 0;
        }
        if (status != worker::ReadStatus::Ok) {
            std::fprintf(stderr,
                         "tilescope-worker: a broken request frame (it ended early or its lengths are absurd)\n");
            return 4;
        }
        const std::string type = worker::frameType(frame);
        if (type == "shutdown") {
            runtime.release();
            return 0;
        }
        if (type == "open") {
            worker::Open request;
            try {
                request = worker::decodeOpen(frame);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "tilescope-worker: %s\n", e.what());
                return 4;
            }
            if (!send(options.out, runtime.open(request))) {
                runtime.release();
                return 0;
            }
            continue;
        }
        if (type == "measure") {
            worker::Measure request;
            try {
                request = worker::decodeMeasure(frame);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "tilescope-worker: %s\n", e.what());
                return 4;
            }
            const worker::Result result = runtime.measure(request, frame.blob);
            const bool sent = send(options.out, result);
            if (result.fatal) {
                // The context is lost: no CUDA call may run again, destructors included.
                std::fprintf(stderr, "tilescope-worker: %s\n", result.measurement.message.c_str());
                std::fflush(stderr);
                std::_Exit(3);
            }
            if (!sent) {
                runtime.release();
                return 0;
            }
            continue;
        }
        std::fprintf(stderr, "tilescope-worker: unknown request '%s'\n",
                     type.empty() ? "(not a JSON object with a type)" : type.c_str());
        return 4;
    }
}

} // namespace

int main(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (arg == "--version") {
            std::printf("tilescope-worker %s\n", TILESCOPE_VERSION);
            return 0;
        }
        if (arg == "--stdio") {
            options.stdio = true;
            continue;
        }
        if (arg == "--compile") {
            if (argc != 2)
                return usageError("--compile takes no other argument");
            return serveNvrtcCompiles(STDIN_FILENO, STDOUT_FILENO);
        }
        int* target = arg == "--device" ? &options.device
                      : arg == "--in"   ? &options.in
                      : arg == "--out"  ? &options.out
                                        : nullptr;
        if (!target)
            return usageError("unknown argument '" + std::string(arg) + "'");
        if (i + 1 >= argc)
            return usageError(std::string(arg) + " needs a value");
        const std::string_view value = argv[++i];
        if (!parseInt(value, *target))
            return usageError(std::string(arg) + ": '" + std::string(value) + "' is not a number 0 or greater");
    }
    if (options.device < 0)
        return usageError("--device is required");
    if (options.stdio) {
        if (options.in >= 0 || options.out >= 0)
            return usageError("--stdio takes the place of --in and --out");
        // The protocol keeps the original stdin and stdout; fd 1 then points at stderr, so that
        // what the driver or CUPTI prints cannot corrupt the stream.
        options.in = ::dup(0);
        options.out = ::dup(1);
        if (options.in < 0 || options.out < 0 || ::dup2(2, 1) < 0)
            return usageError("cannot set up --stdio: " + std::string(std::strerror(errno)));
        const int devNull = ::open("/dev/null", O_RDONLY);
        if (devNull >= 0) {
            ::dup2(devNull, 0);
            ::close(devNull);
        }
    }
    if (options.in < 0 || options.out < 0)
        return usageError("--in and --out (or --stdio) are required");
    for (const int fd : {options.in, options.out}) {
        if (::fcntl(fd, F_GETFD) == -1)
            return usageError("file descriptor " + std::to_string(fd) + " is not open");
    }

    // A reply to an engine that has gone must fail as a write, not kill the process.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, nullptr);
    // Ctrl-C in a terminal interrupts the whole foreground process group, the worker included.
    // The engine answers it by stopping after the results in hand and then shutting its workers
    // down; a worker killed by the same keystroke would record its config as crashed instead.
    ::sigaction(SIGINT, &ignore, nullptr);

    try {
        return serve(options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tilescope-worker: internal error: %s\n", e.what());
        return 5;
    }
}
